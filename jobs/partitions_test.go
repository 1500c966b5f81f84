package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

// closeFirstPartition moves the inbox's ids past its first partition for
// new deliveries ([1, 1000001), made by migration 026) and makes the next
// one: the deliveries stored so far are then a closed partition's.
func (b *retentionBundle) closeFirstPartition(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, "SELECT setval('inbox_id_seq', 1000000)")
	require.NoError(t, err)
	name, lo, _, err := jobs.EnsurePartition(ctx, b.pool, day, 1000, b.now)
	require.NoError(t, err)
	require.Equal(t, "inbox_p1000001", name)
	require.EqualValues(t, 1000001, lo)
}

func (b *retentionBundle) partitions(t *testing.T) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
		WHERE h.inhparent = 'inbox'::regclass ORDER BY c.relname`)
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	return names
}

func (b *retentionBundle) count(t *testing.T, sql string) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql).Scan(&n))
	return n
}

func (b *retentionBundle) retention(t *testing.T) jobs.RetentionResult {
	t.Helper()
	logger, _ := testlog.New(t)
	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{
		Inbox:           map[string]time.Duration{"github": 30 * day, "stripe": 7 * day},
		IdempotencyKeys: day, BatchSize: 2, Pause: time.Millisecond,
	}, time.Minute, logger)
	res, err := w.Run(context.Background(), b.now)
	require.NoError(t, err)
	return res
}

// A closed partition whose deliveries are all expired and processed is
// dropped whole, with its outcomes and replay records; their keys stay
// with their generation, so a resend of one is still a duplicate. The
// open partition's deliveries stay.
func TestRetentionDropsAnExpiredPartition(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	b.row(t, "github", "old-1", "processed", 40*day)
	old := b.row(t, "github", "old-2", "skipped", 35*day)
	b.row(t, "stripe", "old-3", "processed", 31*day)
	_, err := b.pool.Exec(ctx, "INSERT INTO replay (inbox_id, job_id) VALUES ($1, 1)", old)
	require.NoError(t, err)
	b.closeFirstPartition(t)
	young := b.row(t, "github", "young", "processed", 40*day)
	require.Greater(t, young, int64(1000000), "stored in the next partition")

	res := b.retention(t)
	require.Equal(t, jobs.RetentionResult{InboxDeleted: 4, PartitionsDropped: 1}, res,
		"the partition's three, and the next one's expired delivery by batch")
	require.Equal(t, []string{"inbox_overflow", "inbox_p0", "inbox_p1000001"}, b.partitions(t))
	require.Empty(t, b.remaining(t))
	require.Equal(t, 3, b.count(t, "SELECT count(*) FROM inbox_key"), "the dropped partition's; the batch deleted its delivery's key")
	require.Zero(t, b.count(t, "SELECT count(*) FROM inbox_outcome"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM pg_class WHERE relname IN ('inbox_p1', 'inbox_outcome_p1')"), "detached, then dropped")

	require.Equal(t, ingest.OutcomeDuplicate, b.resend(t, "old-1", ingest.Delivery{}).Outcome)
}

// A partition a drop detached but did not drop (its process stopped
// between the two) is dropped by the next pass, and only it: not a table
// that merely has a partition's name.
func TestRetentionDropsADetachedPartitionLeftBehind(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	_, err := b.pool.Exec(context.Background(), `SELECT inbox_partition_create(5000000, 5001000);
		ALTER TABLE inbox DETACH PARTITION inbox_p5000000;
		ALTER TABLE inbox_outcome DETACH PARTITION inbox_outcome_p5000000;
		COMMENT ON TABLE inbox_p5000000 IS '`+jobs.DetachedComment+`';
		COMMENT ON TABLE inbox_outcome_p5000000 IS '`+jobs.DetachedComment+`';
		CREATE TABLE inbox_p7000000 (id bigint)`)
	require.NoError(t, err)
	before := b.partitions(t)

	b.retention(t)
	require.Zero(t, b.count(t, "SELECT count(*) FROM pg_class WHERE relname IN ('inbox_p5000000', 'inbox_outcome_p5000000')"))
	require.Equal(t, before, b.partitions(t))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM pg_class WHERE relname = 'inbox_p7000000'"), "a table that only has a partition's name")
}

// A partition with a delivery retention keeps (failed, pending, or with
// follow-up work unfinished: a destination send, a handler step whose job
// waits for its retry, a replay an operator queued) stays; its other
// expired deliveries are deleted by batches, and the kept one with its key
// stays.
func TestRetentionKeepsAPartitionWithWorkLeft(t *testing.T) {
	t.Parallel()
	for _, status := range []string{"failed", "received", "sending", "step", "replay"} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			b := setupRetention(t)
			ctx := context.Background()
			b.row(t, "github", "done", "processed", 40*day)
			switch status {
			case "sending":
				id := b.row(t, "github", "kept", "processed", 40*day)
				_, err := b.pool.Exec(ctx, `INSERT INTO destination_send (destination, source, delivery_id, inbox_id,
						event_type, key, ordered, skip_stale, event_at, event_received_at, at_is_receipt, state)
					VALUES ('app', 'github', 'kept', $1, 'push', 'k', false, false, now(), now(), true, 'pending')`, id)
				require.NoError(t, err)
			case "step":
				b.row(t, "github", "kept", "processed", 40*day)
				_, err := b.pool.Exec(ctx, `WITH j AS (
						INSERT INTO river_job (args, kind, max_attempts, priority, queue, state)
						VALUES ('{}', 'fulfill', 25, 1, 'default', 'retryable') RETURNING id)
					INSERT INTO handler_step (key, source, delivery_id, handler, step, job_id)
					SELECT 'kept-fulfill', 'github', 'kept', 'saga', 'fulfill', id FROM j`)
				require.NoError(t, err)
			case "replay":
				// Handled, and queued again by an operator: only its job
				// says it is unfinished.
				id := b.row(t, "github", "kept", "processed", 40*day)
				rc, err := jobs.NewClient(b.pool, jobs.ClientConfig{InsertOnly: true})
				require.NoError(t, err)
				require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
					_, err := jobs.ReplayTx(ctx, tx, rc, []int64{id}, nil)
					return err
				}))
			default:
				b.row(t, "github", "kept", status, 40*day)
			}
			b.closeFirstPartition(t)

			res := b.retention(t)
			require.Equal(t, jobs.RetentionResult{InboxDeleted: 1, InboxHeld: 1}, res)
			require.Contains(t, b.partitions(t), "inbox_p1")
			require.Equal(t, []string{"kept"}, b.remaining(t))
			require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox_key WHERE delivery_id = 'kept'"))
		})
	}
}

// A closed partition with a delivery inside its retention waits to be
// dropped whole: the batches leave its expired deliveries alone, except a
// source's whose retention is shorter than the longest, and those expired
// for longer than two partition spans (traffic fell, and the partition
// took long to fill).
func TestRetentionLeavesAPartitionNotYetExpiredToItsDrop(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	b.row(t, "github", "expired", "processed", 31*day)
	b.row(t, "github", "long-expired", "processed", 40*day)
	b.row(t, "stripe", "stripe-expired", "processed", 10*day)
	b.row(t, "github", "inside", "processed", 20*day)
	b.closeFirstPartition(t)

	res := b.retention(t)
	require.Equal(t, jobs.RetentionResult{InboxDeleted: 2}, res)
	require.Equal(t, []string{"expired", "inside"}, b.remaining(t))
	require.Contains(t, b.partitions(t), "inbox_p1")
}

// A delivery that took an id of the partition before retention judged it,
// and commits only as retention waits for the inbox's lock to drop it, is
// seen when the lock is granted: the partition stays, and so does the
// acknowledged delivery.
func TestRetentionDropsNoPartitionUnderAnInsert(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	b.row(t, "github", "expired", "processed", 40*day)
	b.closeFirstPartition(t)

	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	_, err = tx.Exec(ctx, `WITH k AS (
			INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin) VALUES ('github', 'late', 500, '\x00', 'webhook')
		)
		INSERT INTO inbox (id, source, delivery_id, event_type, payload, payload_sha256) VALUES (500, 'github', 'late', 'push', '{}', '\x00')`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "INSERT INTO inbox_pending (inbox_id, source, event_type, received_at) VALUES (500, 'github', 'push', now())")
	require.NoError(t, err)

	done := make(chan jobs.RetentionResult)
	go func() { done <- b.retention(t) }()
	testdb.WaitLockWaiters(t, b.pool, 1, "retention waits for the inbox's lock")
	require.NoError(t, tx.Commit(ctx))
	res := <-done
	require.Zero(t, res.PartitionsDropped)
	require.Equal(t, []string{"late"}, b.remaining(t), "the expired one deleted by batch, as the partition stayed")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox_key WHERE delivery_id = 'late'"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM inbox_key k WHERE NOT EXISTS (SELECT 1 FROM inbox i WHERE i.id = k.inbox_id)"),
		"every key names a stored delivery")
}

// The next partition is made once the newest is half taken, spanning the
// ids of the last span's traffic (at least the minimum); when the ids ran
// into the overflow partition, the new one starts clear of them.
func TestPartitionsAreMadeAheadOfTheIds(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	ensure := func() (string, int64, int64) {
		name, lo, hi, err := jobs.EnsurePartition(ctx, b.pool, time.Hour, 1000, time.Now())
		require.NoError(t, err)
		return name, lo, hi
	}
	name, _, _ := ensure()
	require.Empty(t, name, "the first partition has room")

	_, err := b.pool.Exec(ctx, "SELECT setval('inbox_id_seq', 600000)")
	require.NoError(t, err)
	for i := range 3 {
		b.row(t, "github", "d"+string(rune('a'+i)), "processed", 0)
	}
	name, lo, hi := ensure()
	require.Equal(t, "inbox_p1000001", name)
	require.EqualValues(t, 1000001, lo)
	require.EqualValues(t, 1000, hi-lo, "three deliveries in the last hour: the minimum")
	name, _, _ = ensure()
	require.Empty(t, name, "made once")

	_, err = b.pool.Exec(ctx, "SELECT setval('inbox_id_seq', 1005000)")
	require.NoError(t, err)
	over := b.row(t, "github", "overflow", "processed", 0)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox_overflow"), "id %d has no range partition", over)
	name, lo, hi = ensure()
	require.Greater(t, lo, over)
	require.EqualValues(t, "inbox_p", name[:len("inbox_p")])
	require.GreaterOrEqual(t, hi-lo, over-600001, "the last hour's ids")
}
