package drills

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// resourceLocks holds, from the drill's own session, the advisory locks
// hookinbox's handlers take per resource (docs/handlers.md, "Order
// awareness"), so that
// the jobs of chosen deliveries block inside their handler transaction: a
// drill can then kill the process, or the database, with those
// transactions certainly open.
type resourceLocks struct {
	conn *pgx.Conn
}

// stripeLockKey is the handlers' lock key for a Stripe payment intent
// (handlers/resource.go: "r:<len(source)>:<source>:<resource>").
func stripeLockKey(pi string) string { return fmt.Sprintf("r:%d:%s:%s", len("stripe"), "stripe", pi) }

// lockResources takes the locks in a new session. It returns errors rather
// than failing t, so drills may call it from their fault goroutine.
func lockResources(t testing.TB, dbURL string, keys ...string) (*resourceLocks, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("lock session: %w", err)
	}
	l := &resourceLocks{conn: conn}
	t.Cleanup(l.release)
	for _, k := range keys {
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, k); err != nil {
			return nil, fmt.Errorf("lock %s: %w", k, err)
		}
	}
	return l, nil
}

// release ends the session and with it the locks. A session the database
// already dropped (a restart) is fine.
func (l *resourceLocks) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.conn.Close(ctx)
}

// waitBlocked waits until n sessions on the drill's database wait for an
// advisory lock: n handler transactions open and stuck.
func waitBlocked(pool *pgxpool.Pool, n int, timeout time.Duration) error {
	var got int
	ok := waitFor(context.Background(), timeout, 20*time.Millisecond, func() bool {
		_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&got)
		return got >= n
	})
	if !ok {
		return fmt.Errorf("%d of %d handler transactions blocked on their resource lock after %s "+
			"(has the handlers' lock key format changed?)", got, n, timeout)
	}
	return nil
}

// retriedJobs counts, among the given inbox rows, those whose processing
// ran again after its first run was cut off: a job of their own or their
// batch's that ran more than once, or the retry a failed batch gave them
// (a job of their own carrying the attempts the batch spent).
func retriedJobs(ctx context.Context, pool *pgxpool.Pool, inboxIDs []int64) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM unnest($1::bigint[]) AS u (id)
		WHERE EXISTS (SELECT 1 FROM delivery_job_ids(u.id) AS d (job_id) JOIN river_job j ON j.id = d.job_id
		              WHERE j.attempt > 1 OR coalesce((j.metadata->>'attempts_before')::int, 0) > 0)`, inboxIDs).Scan(&n)
	return n, err
}
