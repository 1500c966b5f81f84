package migrations_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/migrations"
)

type aheadBundle struct {
	ctx  context.Context
	pool *pgxpool.Pool
}

// setupAhead is a database an older hookinbox migrated to version 25, with
// n deliveries old-1 … old-n in its inbox (every tenth with a body key).
func setupAhead(t *testing.T, n int) *aheadBundle {
	t.Helper()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 25)
	_, err := pool.Exec(ctx, `
		CREATE TABLE hookinbox_migration (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO hookinbox_migration (version, name) SELECT v, 'older' FROM generate_series(1, 25) v`)
	require.NoError(t, err)
	b := &aheadBundle{ctx: ctx, pool: pool}
	b.store(t, "old", 1, n)
	return b
}

// store inserts deliveries prefix-from … prefix-to as version 25's ingest
// did: the inbox's own unique constraints decide duplicates.
func (b *aheadBundle) store(t *testing.T, prefix string, from, to int) {
	t.Helper()
	_, err := b.pool.Exec(b.ctx, `
		INSERT INTO inbox (source, delivery_id, event_type, payload, payload_sha256, body_key)
		SELECT 'github', $1 || '-' || g, 'push', '{}', sha256('{}'),
		       CASE WHEN g % 10 = 0 THEN sha256(($1 || g)::bytea) END
		FROM generate_series($2::int, $3::int) g
		ON CONFLICT DO NOTHING`, prefix, from, to)
	require.NoError(t, err)
}

func (b *aheadBundle) remove(t *testing.T, deliveryID string) {
	t.Helper()
	_, err := b.pool.Exec(b.ctx, "DELETE FROM inbox WHERE delivery_id = $1", deliveryID)
	require.NoError(t, err)
}

// unfinish makes the copy as if it had not reached the keys where cond
// holds: they are deleted, and the copy is no longer marked finished.
func (b *aheadBundle) unfinish(t *testing.T, cond string) {
	t.Helper()
	_, err := b.pool.Exec(b.ctx, "COMMENT ON TABLE inbox_key IS NULL; DELETE FROM inbox_key WHERE "+cond)
	require.NoError(t, err)
}

// finishCopy runs Prepare's copy alone.
func (b *aheadBundle) finishCopy(t *testing.T) {
	t.Helper()
	conn, err := pgx.ConnectConfig(b.ctx, b.pool.Config().ConnConfig.Copy())
	require.NoError(t, err)
	defer conn.Close(b.ctx)
	require.NoError(t, migrations.CopyInboxKeys(b.ctx, conn, slog.New(slog.DiscardHandler)))
}

// waitBlockedOrDone waits until a statement waits for the transaction of
// backend pid, or has ended (done holds its result).
func (b *aheadBundle) waitBlockedOrDone(t *testing.T, pid int, done chan error) {
	t.Helper()
	require.Eventually(t, func() bool {
		if len(done) > 0 {
			return true
		}
		var waiting bool
		require.NoError(t, b.pool.QueryRow(b.ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))", pid).Scan(&waiting))
		return waiting
	}, 10*time.Second, 10*time.Millisecond)
}

// requireKeysMatch checks that inbox_key holds one key for each delivery,
// naming its row, and nothing else.
func (b *aheadBundle) requireKeysMatch(t *testing.T) {
	t.Helper()
	b.requireKeysMatchIn(t, "inbox_key")
}

// requireLiveKeysMatch is requireKeysMatch before the migration, while a
// delete that began as the copy ended may still leave a tombstone behind
// it (the migration deletes them).
func (b *aheadBundle) requireLiveKeysMatch(t *testing.T) {
	t.Helper()
	b.requireKeysMatchIn(t, "(SELECT * FROM inbox_key WHERE inbox_id >= 0)")
}

func (b *aheadBundle) requireKeysMatchIn(t *testing.T, keys string) {
	t.Helper()
	var missing, extra, deliveries int
	require.NoError(t, b.pool.QueryRow(b.ctx, `
		SELECT count(*) FILTER (WHERE k.inbox_id IS NULL), count(*) FILTER (WHERE i.id IS NULL), count(i.id)
		FROM inbox i
		FULL JOIN `+keys+` k ON k.inbox_id = i.id AND (k.source, k.delivery_id, k.payload_sha256, k.origin) = (i.source, i.delivery_id, i.payload_sha256, i.origin)
		     AND k.body_key IS NOT DISTINCT FROM i.body_key`).Scan(&missing, &extra, &deliveries))
	require.Equal(t, 0, missing, "deliveries without their key")
	require.Equal(t, 0, extra, "keys of no delivery")
	require.Positive(t, deliveries)
}

// Keys copied ahead are whole when migration 026 runs, though deliveries
// were stored and deleted (retention, by batches) all the while: before,
// during and after the copy.
func TestPrepareCopiesKeysWhileIngestGoesOn(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 25_000)

	// Ingest and retention, as version 25 does them, for as long as Prepare runs.
	stop, done := make(chan struct{}), make(chan error, 1)
	var writes int
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			_, err := b.pool.Exec(b.ctx, `INSERT INTO inbox (source, delivery_id, event_type, payload, payload_sha256)
				VALUES ('github', 'live-' || $1::int, 'push', '{}', sha256('{}')) ON CONFLICT DO NOTHING`, i)
			if err == nil {
				_, err = b.pool.Exec(b.ctx, "DELETE FROM inbox WHERE delivery_id = 'old-' || ($1::int * 2)", i)
			}
			if err == nil && i%5 == 0 { // a resend after retention deleted the delivery
				_, err = b.pool.Exec(b.ctx, `INSERT INTO inbox (source, delivery_id, event_type, payload, payload_sha256)
					VALUES ('github', 'old-' || ($1::int * 2), 'push', '{}', sha256('{}')) ON CONFLICT DO NOTHING`, i)
			}
			if err != nil {
				done <- err
				return
			}
			writes = i
		}
	}()
	res, err := migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	close(stop)
	require.NoError(t, <-done)
	require.Positive(t, writes)
	require.Equal(t, []int{26, 27, 31, 32}, res.Versions)

	// Once Prepare is done, the triggers alone keep the keys.
	b.store(t, "after", 1, 3)
	b.remove(t, "old-1")
	b.requireLiveKeysMatch(t)

	_, err = migrations.Up(b.ctx, b.pool, nil)
	require.NoError(t, err)
	b.requireKeysMatch(t)
	var triggers int
	require.NoError(t, b.pool.QueryRow(b.ctx, "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'inbox_key_follow%'").Scan(&triggers))
	require.Zero(t, triggers)

	res, err = migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	require.Empty(t, res.Versions, "nothing left to prepare")
}

// A delete under way when the copy reaches its row leaves no key behind:
// the copy meets its tombstone, waits for it and leaves it.
func TestPrepareCopyWaitsForADeleteUnderWay(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 100)
	_, err := migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	b.unfinish(t, "delivery_id = 'old-7'")

	tx, err := b.pool.Begin(b.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(b.ctx) }()
	_, err = tx.Exec(b.ctx, "DELETE FROM inbox WHERE delivery_id = 'old-7'")
	require.NoError(t, err)

	conn, err := pgx.ConnectConfig(b.ctx, b.pool.Config().ConnConfig.Copy())
	require.NoError(t, err)
	defer conn.Close(b.ctx)
	prepared := make(chan error, 1)
	go func() { prepared <- migrations.CopyInboxKeys(b.ctx, conn, slog.New(slog.DiscardHandler)) }()
	// Commit once the copy waits for the delete's tombstone, or has gone past it.
	var pid int
	require.NoError(t, tx.QueryRow(b.ctx, "SELECT pg_backend_pid()").Scan(&pid))
	b.waitBlockedOrDone(t, pid, prepared)
	require.NoError(t, tx.Commit(b.ctx))
	require.NoError(t, <-prepared)
	b.requireKeysMatch(t)
}

// A copy cut short (Prepare stopped, or never finished) is finished by the
// migration itself, which also removes the tombstones of the deliveries
// deleted meanwhile.
func TestMigrationFinishesAnUnfinishedCopy(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 100)
	_, err := migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	b.unfinish(t, "inbox_id % 3 = 0")
	b.remove(t, "old-10")
	b.remove(t, "old-11")
	_, err = migrations.Up(b.ctx, b.pool, nil)
	require.NoError(t, err)
	b.requireKeysMatch(t)
}

// A delete that meets the key of its row while the copy inserts it waits
// for the copy, then makes that key its tombstone.
func TestADeleteWaitsForAKeyBeingCopied(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 100)
	_, err := migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	b.unfinish(t, "delivery_id = 'old-8'")

	copying, err := b.pool.Begin(b.ctx) // the copy's window, holding old-8's key
	require.NoError(t, err)
	defer func() { _ = copying.Rollback(b.ctx) }()
	_, err = copying.Exec(b.ctx, `INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
		SELECT source, delivery_id, id, payload_sha256, origin, body_key FROM inbox WHERE delivery_id = 'old-8'`)
	require.NoError(t, err)
	var pid int
	require.NoError(t, copying.QueryRow(b.ctx, "SELECT pg_backend_pid()").Scan(&pid))

	deleted := make(chan error, 1)
	go func() {
		_, err := b.pool.Exec(b.ctx, "DELETE FROM inbox WHERE delivery_id = 'old-8'")
		deleted <- err
	}()
	b.waitBlockedOrDone(t, pid, deleted)
	require.NoError(t, copying.Commit(b.ctx))
	require.NoError(t, <-deleted)
	b.finishCopy(t)
	b.requireKeysMatch(t)
}

// A delivery stored again after a delete left its tombstone gets its key
// back, naming the new row.
func TestADeliveryStoredAgainReplacesItsTombstone(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 100)
	_, err := migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	b.unfinish(t, "FALSE")
	b.remove(t, "old-9")
	b.store(t, "old", 9, 9)
	b.finishCopy(t)
	b.requireKeysMatch(t)
}

// The migration trusts a finished copy: it reads no key again while it
// holds the inbox's writes. (A key missing from a finished copy, which the
// triggers make impossible, shows whether it did.)
func TestMigrationCopiesNothingAfterPrepare(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 100)
	_, err := migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	_, err = b.pool.Exec(b.ctx, "DELETE FROM inbox_key WHERE delivery_id = 'old-7'")
	require.NoError(t, err)
	_, err = migrations.Up(b.ctx, b.pool, nil)
	require.NoError(t, err)
	var keys int
	require.NoError(t, b.pool.QueryRow(b.ctx, "SELECT count(*) FROM inbox_key WHERE delivery_id LIKE 'old-%'").Scan(&keys))
	require.Equal(t, 99, keys)
}

// An index build that failed or was cancelled leaves an invalid index,
// which the migration's IF NOT EXISTS would take for the real one: Prepare
// builds it again.
func TestPrepareRebuildsAnInvalidIndex(t *testing.T) {
	t.Parallel()
	b := setupAhead(t, 10)
	_, err := b.pool.Exec(b.ctx, `CREATE INDEX handler_step_job_idx ON handler_step (job_id) WHERE job_id IS NOT NULL;
		UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'handler_step_job_idx'::regclass`)
	require.NoError(t, err)
	_, err = migrations.Prepare(b.ctx, b.pool, nil)
	require.NoError(t, err)
	var valid bool
	require.NoError(t, b.pool.QueryRow(b.ctx, "SELECT indisvalid FROM pg_index WHERE indexrelid = 'handler_step_job_idx'::regclass").Scan(&valid))
	require.True(t, valid)
}
