package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// fenceProbeArgs is a job of the processing kind that works nothing.
type fenceProbeArgs struct{}

func (fenceProbeArgs) Kind() string { return ProcessDeliveryArgs{}.Kind() }

type fenceProbeWorker struct {
	river.WorkerDefaults[fenceProbeArgs]
}

func (fenceProbeWorker) Work(context.Context, *river.Job[fenceProbeArgs]) error { return nil }

// River records each snooze a fence makes in the job's metadata, beside
// its own count of snoozes: MaxDeferrals counts the others only.
func TestAFencedSnoozeIsRecordedOnTheJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	g, err := NewGeneration(pool, GenerationConfig{Fingerprint: "v1", Every: 20 * time.Millisecond})
	require.NoError(t, err) // never started: fenced
	workers := river.NewWorkers()
	river.AddWorker(workers, fenceProbeWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Workers: workers,
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Middleware: []rivertype.Middleware{g.Middleware()}, FetchCooldown: 20 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})
	res, err := client.Insert(ctx, fenceProbeArgs{}, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var fenced, snoozes int
		err := pool.QueryRow(ctx, `SELECT coalesce((metadata->>'hookinbox_fenced')::int, 0), coalesce((metadata->>'snoozes')::int, 0)
			FROM river_job WHERE id = $1`, res.Job.ID).Scan(&fenced, &snoozes)
		return err == nil && fenced >= 2 && fenced == snoozes
	}, 10*time.Second, 10*time.Millisecond, "each snooze recorded as the fence's")
}
