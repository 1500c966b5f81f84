package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

type switchProbeArgs struct{}

func (switchProbeArgs) Kind() string { return "switch_probe" }

type switchProbeWorker struct {
	river.WorkerDefaults[switchProbeArgs]
}

func (switchProbeWorker) Work(context.Context, *river.Job[switchProbeArgs]) error { return nil }

// A switch of the processing queue that River refuses (here an Add of a
// queue the client already holds, as after an Add whose start failed) is
// tried again from a clean removal, and the queue works jobs after it.
func TestProcessingQueueSwitchRecoversFromARefusal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	workers := river.NewWorkers()
	river.AddWorker(workers, switchProbeWorker{})
	qc := river.QueueConfig{MaxWorkers: 1}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Workers: workers,
		Queues: map[string]river.QueueConfig{queueDeliveries: qc}, FetchPollInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	g, err := NewGeneration(pool, GenerationConfig{Fingerprint: "v1", Every: 20 * time.Millisecond})
	require.NoError(t, err)
	g.attach(client.Queues(), queueDeliveries, qc)
	require.NoError(t, client.Start(ctx))
	g.riverWorks() // as Start does
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx), "River stops: no producer was removed before its start was waited for")
	})
	q := g.queue.Load()
	state := func() (removed, unsure bool) {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.removed, q.unsure
	}

	g.outdated.Store(true)
	g.applyQueue()
	removed, unsure := state()
	require.True(t, removed && !unsure, "outdated: the queue is removed")

	require.NoError(t, client.Queues().Add(queueDeliveries, qc)) // River now holds what the Generation thinks it removed
	g.outdated.Store(false)
	g.applyQueue()
	_, unsure = state()
	require.True(t, unsure, "the Add was refused")
	require.Eventually(t, func() bool { removed, unsure := state(); return !removed && !unsure }, 5*time.Second, 10*time.Millisecond,
		"tried again from a clean removal")

	res, err := client.Insert(ctx, switchProbeArgs{}, &river.InsertOpts{Queue: queueDeliveries})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		job, err := client.JobGet(ctx, res.Job.ID)
		return err == nil && job.State == "completed"
	}, 10*time.Second, 20*time.Millisecond, "the queue works jobs")
}
