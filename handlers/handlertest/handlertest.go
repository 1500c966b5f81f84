// Package handlertest runs handlers in tests as hookinbox runs them: a
// real PostgreSQL (one throwaway server per test binary, a fresh migrated
// database per test), a real River client working the jobs, and
// deliveries recorded exactly as ingest records them. It is for the tests
// of handlers written in a program built on hookinbox:
//
//	func TestMain(m *testing.M) { handlertest.Main(m) }
//
//	func TestStars(t *testing.T) {
//		env := handlertest.New(t, handlertest.Config{
//			Migrations: hookinbox.Sub(migrations, "migrations"),
//			Register:   func(r *handlers.Registry) error { return registerStars(r, chat.URL) },
//		})
//		id := env.Deliver(t, "github", "d1", "star", payload)
//		env.WaitStatus(t, id, "processed")
//		env.Replay(t, id) // and check that nothing new happened
//	}
//
// The server is started from the machine's PostgreSQL binaries (as root,
// it runs as the postgres user), or TEST_DATABASE_URL names one to use.
package handlertest

import (
	"context"
	"io/fs"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/migrations"
)

// Main runs the test binary's tests with a PostgreSQL server for them.
// Call it from TestMain.
func Main(m *testing.M) { testdb.Main(m) }

// Config says what a test environment runs.
type Config struct {
	// Sources are the configured sources. Defaults to github, stripe and
	// billing (standard), each named as its provider but billing.
	Sources []handlers.Source
	// Register adds the handlers under test (and their follow-up workers).
	Register func(r *handlers.Registry) error
	// Migrations are the program's own NNN_name.up.sql files, applied after
	// hookinbox's as serve applies them. Nil: none.
	Migrations fs.FS
	// MaxAttempts bounds each job's attempts. Defaults to River's (25).
	MaxAttempts int
}

// Env is one test's running hookinbox: its database, its River client,
// and its inbox.
type Env struct {
	Pool   *pgxpool.Pool
	Client *river.Client[pgx.Tx]
	inbox  *ingest.Inbox
}

// fastRetry retries failed jobs at once: tests do not wait out backoffs.
type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(10 * time.Millisecond) }

// New starts an environment for t, stopped when t ends.
func New(t testing.TB, cfg Config) *Env {
	t.Helper()
	ctx := context.Background()
	if cfg.Sources == nil {
		cfg.Sources = []handlers.Source{{Name: "github", Provider: "github"}, {Name: "stripe", Provider: "stripe"}, {Name: "billing", Provider: "standard"}}
	}
	env := &Env{Pool: testdb.New(t)}
	if cfg.Migrations != nil {
		if _, err := migrations.UpWith(ctx, env.Pool, nil, migrations.Options{App: cfg.Migrations}); err != nil {
			t.Fatalf("handlertest: migrations: %v", err)
		}
	}
	reg := handlers.NewRegistry(handlers.Config{Sources: cfg.Sources})
	if cfg.Register != nil {
		if err := cfg.Register(reg); err != nil {
			t.Fatalf("handlertest: register: %v", err)
		}
	}
	client, err := jobs.NewClient(env.Pool, jobs.ClientConfig{Registry: reg, MaxWorkers: 10, MaxAttempts: cfg.MaxAttempts,
		RetryPolicy: fastRetry{}, FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("handlertest: %v", err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatalf("handlertest: %v", err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			_ = client.StopAndCancel(context.Background())
		}
	})
	env.Client, env.inbox = client, ingest.NewInbox(env.Pool, client)
	return env
}

// Deliver records a delivery as ingest does (the inbox row and its
// processing job, in one transaction) and returns its inbox id.
func (e *Env) Deliver(t testing.TB, source, deliveryID, eventType string, payload []byte) int64 {
	t.Helper()
	rec, err := e.inbox.Record(context.Background(), ingest.Delivery{Source: source, DeliveryID: deliveryID, EventType: eventType,
		Headers: http.Header{"Content-Type": {"application/json"}}, Payload: payload})
	if err != nil {
		t.Fatalf("handlertest: deliver: %v", err)
	}
	return rec.ID
}

// Replay enqueues another processing of a stored delivery, as the admin
// API's replay does, and returns the job's id.
func (e *Env) Replay(t testing.TB, inboxID int64) int64 {
	t.Helper()
	var jobID int64
	if err := pgx.BeginFunc(context.Background(), e.Pool, func(tx pgx.Tx) error {
		replays, err := jobs.ReplayTx(context.Background(), tx, e.Client, []int64{inboxID}, nil)
		if err == nil {
			jobID = replays[0].JobID
		}
		return err
	}); err != nil {
		t.Fatalf("handlertest: replay: %v", err)
	}
	return jobID
}

// WaitStatus waits up to 15 s for the delivery to have status (as the view
// delivery shows it: received while pending, then what processing decided).
func (e *Env) WaitStatus(t testing.TB, inboxID int64, status string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := e.Pool.QueryRow(context.Background(), "SELECT status FROM delivery WHERE id = $1", inboxID).Scan(&got); err == nil && got == status {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("handlertest: inbox row %d is %q, never %q", inboxID, got, status)
}

// WaitJobs waits up to 15 s until no job of kind is left to run, and
// returns the count per final state (completed, cancelled, discarded).
func (e *Env) WaitJobs(t testing.TB, kind string) map[string]int {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		states := map[string]int{}
		rows, err := e.Pool.Query(context.Background(), "SELECT state::text, count(*) FROM river_job WHERE kind = $1 GROUP BY 1", kind)
		if err != nil {
			t.Fatalf("handlertest: %v", err)
		}
		var (
			state string
			n     int
		)
		if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { states[state] = n; return nil }); err != nil {
			t.Fatalf("handlertest: %v", err)
		}
		if states["available"]+states["running"]+states["retryable"]+states["scheduled"]+states["pending"] == 0 {
			return states
		}
		if time.Now().After(deadline) {
			t.Fatalf("handlertest: jobs of kind %s never finished: %v", kind, states)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Downstream is a stand-in for the APIs a handler's follow-up jobs call:
// a real HTTP server that applies each Idempotency-Key's effect once and
// records every request (Requests, Effects), and can be scripted to fail
// (Script, SetFallback). NewDownstream starts one.
type Downstream = downstreamstub.Server

// Downstream actions for Script and SetFallback.
const (
	Apply           = downstreamstub.Apply
	Fail            = downstreamstub.Fail
	Refuse          = downstreamstub.Refuse
	ApplyThenStall  = downstreamstub.ApplyThenStall
	ApplyThenHangUp = downstreamstub.ApplyThenHangUp
)

// NewDownstream starts a Downstream on a free loopback port, closed when
// t ends.
func NewDownstream(t testing.TB) *Downstream { return downstreamstub.New(t) }
