package drills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A job that a killed process was running stays "running" in river_job:
// nothing is lost, but River's rescuer retries it only once it has been
// running for RescueStuckJobsAfter (jobs.rescue_stuck_after, 2m by
// default), and the rescuer runs every 30 s. The drills do not wait for
// that: after their faults, they fast-forward those jobs' clock by two
// hours and restart hookinbox gracefully, whose new leader runs the
// rescuer at once. This bypasses jobs.rescue_stuck_after, so it proves
// nothing about it; TestStrandedJobRescuedAfterCrash (regressions_test.go)
// waits for River's own rescue under a short setting instead. The audit
// then checks that the rescue, a re-run of work whose first run may have
// half happened, causes no second effect.

// strandedWhere selects the work jobs still "running" that the live
// process (River client $2) is not running: attempted before the last fault
// ($1), or last fetched by another client. The second is for a fetch a
// killed process sent just before it died: PostgreSQL still runs it, and
// stamps the jobs' attempted_at with a time after the kill.
const strandedWhere = `kind IN (` + workKinds + `) AND state = 'running'
	AND (attempted_at < $1 OR attempted_by[array_upper(attempted_by, 1)] IS DISTINCT FROM $2)`

// strandedJobs counts, by kind, the jobs strandedWhere selects: the process
// that was running them is gone, or their completion was lost with the
// database.
func strandedJobs(ctx context.Context, pool *pgxpool.Pool, lastFault time.Time, liveClient string) (map[string]int, error) {
	rows, err := pool.Query(ctx, `SELECT kind, count(*) FROM river_job WHERE `+strandedWhere+` GROUP BY 1`, lastFault, liveClient)
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
	liveClient := p.riverClientID()
	if liveClient == "" {
		t.Fatalf("no River client ID in %s's log", p.name)
	}
	var (
		left     backlog
		stranded map[string]int
		err      error
	)
	waitFor(ctx, pick(30*time.Second, 60*time.Second), 200*time.Millisecond, func() bool {
		if left, err = readBacklog(ctx, pool); err != nil || left.empty() {
			return err == nil
		}
		if stranded, err = strandedJobs(ctx, pool, lastFault, liveClient); err != nil {
			return false
		}
		// Stop early only when stranding explains every unfinished job.
		// Rows unprocessed with no job left at all are a loss, not a
		// strand: wait them out to the timeout, then report them.
		n := sum(stranded)
		return n > 0 && n == sum(left.Jobs)
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
		WHERE `+strandedWhere, lastFault, liveClient); err != nil {
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

func TestRiverClientIDIsTheLatestRuns(t *testing.T) {
	t.Parallel()
	p := &proc{logPath: filepath.Join(t.TempDir(), "hookinbox.log")}
	if id := p.riverClientID(); id != "" {
		t.Fatalf("no log yet: got %q", id)
	}
	log := `---- drill: starting hookinbox
time=2026-12-02T03:00:10.457Z level=INFO msg="River client started" role=all client_id=vm_2026_12_02T03_00_10_100000
---- drill: starting hookinbox
time=2026-12-02T03:00:12.457Z level=INFO msg="River client started" role=all client_id=vm_2026_12_02T03_00_12_398890
time=2026-12-02T03:00:12.459Z level=INFO msg="hookinbox ready" role=all
`
	if err := os.WriteFile(p.logPath, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, want := p.riverClientID(), "vm_2026_12_02T03_00_12_398890"; id != want {
		t.Fatalf("got %q, want the latest run's %q", id, want)
	}
}
