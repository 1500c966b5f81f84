package handlertest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// waitTimeout bounds every Wait: long enough for a loaded CI machine, short
// enough that a test that will never pass says so.
const waitTimeout = 15 * time.Second

// Status is the delivery's status as the view delivery shows it (received
// while pending, then what processing decided) and its last error, if any.
func (e *Env) Status(t testing.TB, inboxID int64) (status string, lastError *string) {
	t.Helper()
	status, lastError, err := inbox.Status(context.Background(), e.Pool, inboxID)
	if err != nil {
		t.Fatalf("handlertest: status of inbox row %d: %v", inboxID, err)
	}
	return status, lastError
}

// WaitStatus waits for the delivery to have status (Status).
func (e *Env) WaitStatus(t testing.TB, inboxID int64, status string) {
	t.Helper()
	var got string
	if !wait(func() bool { got, _ = e.Status(t, inboxID); return got == status }) {
		t.Fatalf("handlertest: inbox row %d is %q, never %q", inboxID, got, status)
	}
}

// JobStates counts the jobs of kind by state.
func (e *Env) JobStates(t testing.TB, kind string) map[string]int {
	t.Helper()
	rows, err := e.Pool.Query(context.Background(), "SELECT state::text, count(*) FROM river_job WHERE kind = $1 GROUP BY 1", kind)
	if err != nil {
		t.Fatalf("handlertest: %v", err)
	}
	states := map[string]int{}
	var (
		state string
		n     int
	)
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { states[state] = n; return nil }); err != nil {
		t.Fatalf("handlertest: %v", err)
	}
	return states
}

// WaitJobs waits until no job of kind is left to run, and returns the
// count per final state (completed, cancelled, discarded).
func (e *Env) WaitJobs(t testing.TB, kind string) map[string]int {
	t.Helper()
	var states map[string]int
	if !wait(func() bool {
		states = e.JobStates(t, kind)
		return states["available"]+states["running"]+states["retryable"]+states["scheduled"]+states["pending"] == 0
	}) {
		t.Fatalf("handlertest: jobs of kind %s never finished: %v", kind, states)
	}
	return states
}

// WaitJob waits for one job to reach a final state and returns it.
func (e *Env) WaitJob(t testing.TB, jobID int64) string {
	t.Helper()
	var state string
	if !wait(func() bool {
		if err := e.Pool.QueryRow(context.Background(), "SELECT state::text FROM river_job WHERE id = $1", jobID).Scan(&state); err != nil {
			t.Fatalf("handlertest: job %d: %v", jobID, err)
		}
		return state == "completed" || state == "cancelled" || state == "discarded"
	}) {
		t.Fatalf("handlertest: job %d is %s, never finished", jobID, state)
	}
	return state
}

// wait polls done until it holds or waitTimeout passes.
func wait(done func() bool) bool {
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(20 * time.Millisecond) {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
