package redeliver

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testlog"
)

func TestArgsInsertOpts(t *testing.T) {
	t.Parallel()
	require.Equal(t, "github_redeliver", Args{}.Kind())
	opts := Args{}.InsertOpts()
	require.Equal(t, river.QueueDefault, opts.Queue)
	require.Equal(t, river.UniqueOpts{ByArgs: true, ByPeriod: time.Minute}, opts.UniqueOpts)
	require.Equal(t, 1, opts.MaxAttempts)
}

func TestWorkerRunsAPassOverItsWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.gh.add(repoHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(2 * time.Hour), StatusCode: 500}, // outside the window
		attempt{ID: 2, GUID: guid(2), At: b.ago(40 * time.Minute), StatusCode: 500},
		attempt{ID: 3, GUID: guid(3), At: b.ago(20 * time.Minute), StatusCode: 500},
		attempt{ID: 4, GUID: guid(4), At: b.ago(10 * time.Minute), StatusCode: 200},
	)
	b.insertInbox(t, "github", guid(3))
	b.gh.refuseRedelivery(2, 422)

	logger, logs := testlog.New(t)
	worker := NewWorker(b.pool, map[string]Config{"github": b.cfg}, time.Hour, logger)
	worker.now = func() time.Time { return b.now }

	err := worker.Work(ctx, job(Args{Source: "github"}))

	require.NoError(t, err)
	require.Equal(t, []int64{2}, b.gh.redeliveries())
	out := logs.String()
	require.Contains(t, out, "level=WARN")
	require.Contains(t, out, `msg="github redelivery pass"`)
	require.Contains(t, out, "source=github")
	require.Contains(t, out, "examined=3 failed=2 already_in_inbox=1 redelivered=0")
	require.Contains(t, out, guid(2))
	require.NotContains(t, out, testToken)
}

func TestWorkerCancelsUnknownSource(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	worker := NewWorker(b.pool, map[string]Config{"github": b.cfg}, 0, nil)

	err := worker.Work(ctx, job(Args{Source: "gone"}))

	require.ErrorIs(t, err, &river.JobCancelError{})
	require.ErrorContains(t, err, `source "gone" has no GitHub redelivery configured`)
	require.Empty(t, b.gh.listCalls())
}

func TestWorkerFailsOnListError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cfg := b.cfg
	cfg.Token = "ghp_wrong"
	logger, logs := testlog.New(t)
	worker := NewWorker(b.pool, map[string]Config{"github": cfg}, time.Hour, logger)

	err := worker.Work(ctx, job(Args{Source: "github"}))

	require.ErrorIs(t, err, ErrUnauthorized)
	require.NotErrorIs(t, err, &river.JobCancelError{}) // recorded as a failure, not a cancel
	require.Contains(t, logs.String(), "github redelivery pass failed")
}

// job wraps args the way River hands them to Work.
func job(args Args) *river.Job[Args] {
	return &river.Job[Args]{
		JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 1, Kind: args.Kind(), Queue: river.QueueDefault, State: rivertype.JobStateRunning},
		Args:   args,
	}
}

func TestPeriodicJobRunsAPassOnARiverClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.gh.add(repoHook, attempt{ID: 1, GUID: guid(1), At: b.ago(time.Minute), StatusCode: 500})
	logger, _ := testlog.New(t)
	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, NewWorker(b.pool, map[string]Config{"github": b.cfg}, time.Hour, logger)))
	client, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{
		Logger:       logger,
		Queues:       map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers:      workers,
		PeriodicJobs: []*river.PeriodicJob{PeriodicJob("github", time.Hour)}, // RunOnStart does the work
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

	require.Eventually(t, func() bool { return len(b.gh.redeliveries()) > 0 }, 15*time.Second, 20*time.Millisecond)
	require.Equal(t, []int64{1}, b.gh.redeliveries())
}
