package jobs

import (
	"context"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// After a batch's COMMIT reported an error, the batch job splits its group
// unless the commit happened. Here the batch's transaction is still open
// when split runs (the COMMIT in flight): split waits for its lock on the
// job row, and writes nothing if that transaction commits, or hands each
// delivery a job of its own if it rolls back. Either way each delivery is
// decided once.
func TestSplitWhileTheBatchsCommitIsInFlight(t *testing.T) {
	t.Parallel()
	for _, commits := range []bool{true, false} {
		t.Run(map[bool]string{true: "the commit happens", false: "the commit fails"}[commits], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool := testdb.New(t)
			client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
			require.NoError(t, err)
			pw := &processDeliveriesWorker{w: &processDeliveryWorker{pool: pool, logger: slog.New(slog.DiscardHandler)}}

			var id int64
			require.NoError(t, pool.QueryRow(ctx, `INSERT INTO river_job (args, kind, max_attempts, state, attempt, attempted_at, queue)
				VALUES ('{"inbox_ids":[11,12]}', 'process_deliveries', 25, 'running', 1, now(), 'deliveries') RETURNING id`).Scan(&id))
			job := &river.Job[ProcessDeliveriesArgs]{JobRow: &rivertype.JobRow{ID: id, Attempt: 1, MaxAttempts: 25},
				Args: ProcessDeliveriesArgs{InboxIDs: []int64{11, 12}}}

			batch, err := pool.Begin(ctx)
			require.NoError(t, err)
			defer batch.Rollback(ctx) //nolint:errcheck // a no-op after Commit
			require.NoError(t, pw.completeTx(ctx, batch, job, nil))

			split := make(chan error, 1)
			go func() { split <- pw.split(ctx, job, client, job.Args.InboxIDs) }()
			testdb.WaitLockWaiters(t, pool, 1, "split waits for the batch's lock on the job")

			if commits {
				require.NoError(t, batch.Commit(ctx))
				require.ErrorIs(t, <-split, errJobTakenOver)
			} else {
				require.NoError(t, batch.Rollback(ctx))
				require.NoError(t, <-split)
			}
			var state string
			var handedOn int
			require.NoError(t, pool.QueryRow(ctx, "SELECT state::text FROM river_job WHERE id = $1", id).Scan(&state))
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'process_delivery'
				AND (args->>'alone')::boolean AND tags = '{from_batch}'`).Scan(&handedOn))
			require.Equal(t, "completed", state)
			if commits {
				require.Zero(t, handedOn, "the batch decided them: no second job")
			} else {
				require.Equal(t, 2, handedOn, "a job of its own for each, to run alone")
			}
		})
	}
}

// A batch job that fails on its last attempt and cannot hand its
// deliveries on either (the database unreachable) is snoozed, not failed:
// River would discard it, and its deliveries would be left received with no
// job. Before its last attempt it fails, and River retries it.
func TestBatchJobThatCannotSplitOnItsLastAttemptIsSnoozed(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	broken := testdb.New(t)
	broken.Close() // every statement fails
	pw := &processDeliveriesWorker{w: &processDeliveryWorker{pool: broken, logger: slog.New(slog.DiscardHandler)},
		observe: func(int) {}}
	ctx := rivertest.WorkContext(context.Background(), client)
	work := func(attempt int) error {
		job := &river.Job[ProcessDeliveriesArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: attempt, MaxAttempts: 3},
			Args: ProcessDeliveriesArgs{InboxIDs: []int64{11, 12}}}
		return pw.Work(ctx, job)
	}
	var snooze *river.JobSnoozeError
	require.ErrorAs(t, work(3), &snooze)
	require.Equal(t, splitRetryIn, snooze.Duration)
	err = work(2)
	require.Error(t, err)
	require.NotErrorAs(t, err, &snooze, "attempts left: River retries it")
}
