package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// Completing a batch must not scan river_job or the inbox's tables whole
// once they have grown, however small they were when the connection first ran it. Cached
// as a generic plan, the statement joined its ids to river_job by scanning
// the table made when it was small, and kept doing so as the table grew:
// in the steady benchmark it was a third of the database's time (bench
// README).
func TestCompleteDoesNotScanTablesThatGrew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	conn, err := pool.Acquire(ctx) // plans are cached per connection
	require.NoError(t, err)
	defer conn.Release()

	// Well past the five calls after which PostgreSQL may switch a
	// prepared statement to its generic plan, on small tables.
	for range 8 {
		completeInRolledBackTx(t, conn, runningJobs(t, pool, 2))
	}
	_, err = pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, state, attempt, attempted_at, finalized_at)
		SELECT jsonb_build_object('inbox_id', g), 'process_delivery', 25, 'completed', 1, now(), now()
		FROM generate_series(1, 20000) AS g`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbox (id, source, delivery_id, event_type, payload, payload_sha256)
		SELECT nextval('inbox_id_seq'), 'github', 'd-' || g, 'issues', '{}', '\x00' FROM generate_series(1, 20000) AS g`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
		SELECT 100000 + g, 'github', 'issues', now() FROM generate_series(1, 20000) AS g`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
		SELECT 200000 + g, 'github', 'issues', now(), 'processed', now() FROM generate_series(1, 20000) AS g`)
	require.NoError(t, err)

	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // the test only reads its own statistics
	require.NoError(t, jobs.CompleteProcessedTx(ctx, tx, runningJobs(t, pool, 3)))
	// This transaction's own scans, not yet reported to the statistics.
	rows, err := tx.Query(ctx, `SELECT relname, seq_scan FROM pg_stat_xact_user_tables WHERE relname IN ('river_job', 'inbox', 'inbox_pending', 'inbox_outcome')`)
	require.NoError(t, err)
	var (
		table string
		scans int64
	)
	_, err = pgx.ForEachRow(rows, []any{&table, &scans}, func() error {
		require.Zero(t, scans, "%s scanned whole", table)
		return nil
	})
	require.NoError(t, err)
}

func completeInRolledBackTx(t *testing.T, conn *pgxpool.Conn, js []*river.Job[jobs.ProcessDeliveryArgs]) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, jobs.CompleteProcessedTx(ctx, tx, js))
	require.NoError(t, tx.Rollback(ctx))
}

// runningJobs inserts n process_delivery jobs as River has them while a
// worker runs them.
func runningJobs(t *testing.T, pool *pgxpool.Pool, n int) []*river.Job[jobs.ProcessDeliveryArgs] {
	t.Helper()
	rows, err := pool.Query(context.Background(), `INSERT INTO river_job (args, kind, max_attempts, state, attempt, attempted_at, attempted_by, queue)
		SELECT jsonb_build_object('inbox_id', g), 'process_delivery', 25, 'running', 1, now(), '{test-client}', 'deliveries'
		FROM generate_series(1, $1) AS g
		RETURNING id, (args->>'inbox_id')::bigint`, n)
	require.NoError(t, err)
	var js []*river.Job[jobs.ProcessDeliveryArgs]
	var id, inboxID int64
	_, err = pgx.ForEachRow(rows, []any{&id, &inboxID}, func() error {
		js = append(js, &river.Job[jobs.ProcessDeliveryArgs]{
			JobRow: &rivertype.JobRow{ID: id, Attempt: 1, State: rivertype.JobStateRunning},
			Args:   jobs.ProcessDeliveryArgs{InboxID: inboxID},
		})
		return nil
	})
	require.NoError(t, err)
	return js
}

// A job completeTx completes reads as one River's own completion leaves:
// should a River upgrade complete jobs differently (another column set on
// completion), this fails instead of hookinbox's jobs drifting from it.
func TestCompleteLeavesTheRowRiversCompletionLeaves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	client, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	js := runningJobs(t, pool, 2)
	ours, rivers := js[0], js[1]
	finalizedAt := time.Now().UTC().Truncate(time.Microsecond)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	require.NoError(t, jobs.CompleteProcessedAtTx(ctx, tx, []*river.Job[jobs.ProcessDeliveryArgs]{ours}, finalizedAt))
	p := riverdriver.JobSetStateCompleted(rivers.ID, finalizedAt, nil)
	_, err = client.Pilot().JobSetStateIfRunningMany(ctx, client.Driver().UnwrapExecutor(tx), &riverdriver.JobSetStateIfRunningManyParams{
		ID: []int64{p.ID}, Attempt: []*int{p.Attempt}, ErrData: [][]byte{p.ErrData}, FinalizedAt: []*time.Time{p.FinalizedAt},
		MetadataDoMerge: []bool{false}, MetadataUpdates: [][]byte{nil}, ScheduledAt: []*time.Time{p.ScheduledAt},
		State: []rivertype.JobState{p.State},
	})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))

	// Every column but the id and the args (which name each job's own
	// inbox row).
	row := func(id int64) map[string]any {
		rows, err := pool.Query(ctx, `SELECT to_jsonb(j) - 'id' - 'args' FROM river_job AS j WHERE id = $1`, id)
		require.NoError(t, err)
		m, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[map[string]any])
		require.NoError(t, err)
		return m
	}
	got, want := row(ours.ID), row(rivers.ID)
	require.Equal(t, "completed", want["state"])
	require.Equal(t, want, got)
}

// A batch may hold two jobs of one delivery (a replay beside its first
// run): both complete, and the delivery gets one outcome, not the error an
// upsert gives for a row it touches twice.
func TestCompleteTakesOneDeliveryTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	js := runningJobs(t, pool, 2)
	js[1].Args.InboxID = js[0].Args.InboxID
	_, err := pool.Exec(ctx, `INSERT INTO inbox (id, source, delivery_id, event_type, payload, payload_sha256)
		VALUES ($1, 'github', 'twice', 'issues', '{}', '\x00')`, js[0].Args.InboxID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "INSERT INTO inbox_pending (inbox_id, source, event_type, received_at) VALUES ($1, 'github', 'issues', now())", js[0].Args.InboxID)
	require.NoError(t, err)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	require.NoError(t, jobs.CompleteProcessedTx(ctx, tx, js))
	require.NoError(t, tx.Commit(ctx))

	var completed, pending, outcomes int
	require.NoError(t, pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM river_job WHERE state = 'completed'),
			(SELECT count(*) FROM inbox_pending),
			(SELECT count(*) FROM inbox_outcome WHERE inbox_id = $1 AND status = 'processed')`, js[0].Args.InboxID).
		Scan(&completed, &pending, &outcomes))
	require.Equal(t, 2, completed, "both jobs")
	require.Zero(t, pending, "decided")
	require.Equal(t, 1, outcomes)
}
