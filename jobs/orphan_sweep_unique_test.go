package jobs

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// Two runs that looked at the same orphans before either committed (one's
// window read before the other's commit, its row locks taken after): the
// second enqueues nothing, since the sweep's job is unique by its args
// while it lives. Once that job is discarded too, a later run enqueues
// another.
func TestEnqueueOrphansSkipsADeliveryAnotherRunGaveAJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	lost := int64(41)
	found := []orphan{{inboxID: 7, lastJobState: "none"}, {inboxID: 8, lastJobID: &lost, lastJobState: "discarded"}}
	enqueue := func() []int64 {
		t.Helper()
		var requeued []int64
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			requeued, _, err = enqueueOrphansTx(ctx, tx, client, found)
			return err
		}))
		return requeued
	}
	require.Equal(t, []int64{7, 8}, enqueue())
	require.Empty(t, enqueue(), "the first run's jobs are there")
	_, err = pool.Exec(ctx, "UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE (args->>'inbox_id')::bigint = 7")
	require.NoError(t, err)
	require.Equal(t, []int64{7}, enqueue())
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE tags = '{orphan_sweep}'").Scan(&n))
	require.Equal(t, 3, n)
}
