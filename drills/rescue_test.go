package drills

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A job that a killed process was running stays "running" in river_job:
// nothing is lost, but River's rescuer retries it only once it has been
// running for RescueStuckJobsAfter, which hookinbox leaves at River's
// default of one hour. A drill cannot wait that long, so after its faults
// it fast-forwards those jobs' clock by two hours and restarts hookinbox
// gracefully, whose new leader runs the rescuer at once. The audit then
// checks that the rescue, a re-run of work whose first run may have half
// happened, causes no second effect. The hour itself is reported as a
// product finding (README.md, TestReproStrandedAfterCrash).

// strandedJobs lists work jobs still "running" that were attempted before
// the last fault: the process running them is gone.
func strandedJobs(ctx context.Context, pool *pgxpool.Pool, lastFault time.Time) (map[string]int, error) {
	rows, err := pool.Query(ctx, `SELECT kind, count(*) FROM river_job
		WHERE kind IN (`+workKinds+`) AND state = 'running' AND attempted_at < $1 GROUP BY 1`, lastFault)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, err
		}
		out[kind] = n
	}
	return out, rows.Err()
}

// rescue settles the drill's work: it waits for the backlog to drain, and
// if jobs were stranded by the faults, fast-forwards them, restarts p
// gracefully and waits again. It returns how many jobs were stranded, and
// fails t if work is left that stranding does not explain.
func rescue(t *testing.T, pool *pgxpool.Pool, p *proc, lastFault time.Time) int {
	t.Helper()
	ctx := context.Background()
	// Wait until the work left, if any, is all stranded: nothing else can
	// still move.
	var (
		left     backlog
		stranded map[string]int
		err      error
	)
	waitFor(ctx, pick(30*time.Second, 60*time.Second), 200*time.Millisecond, func() bool {
		if left, err = readBacklog(ctx, pool); err != nil || left.empty() {
			return err == nil
		}
		if stranded, err = strandedJobs(ctx, pool, lastFault); err != nil {
			return false
		}
		return sum(stranded) == sum(left.Jobs)
	})
	if err != nil {
		t.Fatalf("reading the backlog: %v", err)
	}
	if left.empty() {
		return 0
	}
	n := sum(stranded)
	t.Logf("after the faults: %s; stranded: %v", left, stranded)
	if n == 0 || n != sum(left.Jobs) {
		t.Errorf("work left that no fault explains: %s; stranded %v", left, stranded)
		return 0
	}
	if _, err := pool.Exec(ctx, `UPDATE river_job SET attempted_at = attempted_at - interval '2 hours'
		WHERE kind IN (`+workKinds+`) AND state = 'running' AND attempted_at < $1`, lastFault); err != nil {
		t.Fatalf("fast-forward: %v", err)
	}
	p.stop()
	if err := p.restart(); err != nil {
		t.Fatal(err)
	}
	if left := settle(t, pool, 60*time.Second); !left.empty() {
		t.Errorf("not settled after rescuing %d stranded jobs: %s", n, left)
	}
	return n
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// describeStranded is the faults column's note on stranded jobs.
func describeStranded(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d jobs stranded (rescued after fast-forward)", n)
}
