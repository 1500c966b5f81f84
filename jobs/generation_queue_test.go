package jobs

import (
	"context"
	"sync"
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

type holdProbeArgs struct{}

func (holdProbeArgs) Kind() string { return "hold_probe" }

// holdProbeWorker works a job until release closes.
type holdProbeWorker struct {
	river.WorkerDefaults[holdProbeArgs]
	running chan struct{}
	release chan struct{}
}

func (w holdProbeWorker) Work(ctx context.Context, _ *river.Job[holdProbeArgs]) error {
	w.running <- struct{}{}
	select {
	case <-w.release:
	case <-ctx.Done():
	}
	return nil
}

// An older process that has seen the new configuration but still works a
// job of its deliveries queue (whose removal waits for it) has not
// stopped fetching: the new process's Settle waits for the removal, and
// returns at the older process's look after it.
func TestSettleWaitsForTheOlderProcessToStopFetching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	w := holdProbeWorker{running: make(chan struct{}, 1), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(w.release) })
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	qc := river.QueueConfig{MaxWorkers: 1}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Workers: workers,
		Queues: map[string]river.QueueConfig{queueDeliveries: qc}, FetchCooldown: 20 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	const every = 50 * time.Millisecond
	genCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	older, err := NewGeneration(pool, GenerationConfig{Fingerprint: "v1", Every: every})
	require.NoError(t, err)
	older.attach(client.Queues(), queueDeliveries, qc)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		release()
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})
	require.NoError(t, older.Start(genCtx))
	_, err = client.Insert(ctx, holdProbeArgs{}, &river.InsertOpts{Queue: queueDeliveries})
	require.NoError(t, err)
	select {
	case <-w.running:
	case <-time.After(10 * time.Second):
		t.Fatal("the older process works no job")
	}

	newer, err := StartGeneration(genCtx, pool, GenerationConfig{Fingerprint: "v2", Every: every})
	require.NoError(t, err)
	settled := make(chan bool, 1) // whether the older queue was out when Settle returned
	go func() {
		settleCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := newer.Settle(settleCtx)
		settled <- err == nil && older.queue.Load().stopped.Load()
	}()
	require.Eventually(t, older.Outdated, 10*time.Second, every/5, "the older process saw v2")
	select {
	case <-settled:
		t.Fatal("settled while the older process still works a job of its deliveries queue")
	case <-time.After(time.Second): // twenty of its looks
	}
	release()
	select {
	case out := <-settled:
		require.True(t, out, "settled once the older process's deliveries queue was out")
	case <-time.After(20 * time.Second):
		t.Fatal("not settled after the older process's deliveries queue went")
	}
}
