package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// The reference is River's own `river bench` (cmd/river/riverbench in
// River's repository), rewritten here because the module proxy does not
// serve River's CLI module at v0.51: the same client settings, the same
// batches of 5,000 InsertMany kept topped up to 75,000 available jobs, a
// no-op worker, and jobs counted as River reports them completed.
const (
	riverInsertBatch = 5_000
	riverMinJobs     = 75_000
)

type riverResult struct {
	JobsWorked int64    `json:"jobs_worked"`
	Elapsed    duration `json:"elapsed"`
	JobsPerSec float64  `json:"jobs_per_sec"`
	MaxWorkers int      `json:"max_workers"`
}

type noopArgs struct {
	Num int `json:"num"`
}

func (noopArgs) Kind() string { return "benchmark" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// riverRaw works no-op jobs for d on the service's database, after the
// service has stopped and the audit has read its jobs. Like river bench it
// starts from an emptied, vacuumed river_job.
func riverRaw(ctx context.Context, dbURL string, d time.Duration) (riverResult, error) {
	const maxWorkers = 2_000 // river bench's choice, tuned for throughput
	res := riverResult{MaxWorkers: maxWorkers}
	// A default pool, as river bench opens one.
	pool, err := openPool(ctx, dbURL)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	for _, q := range []string{"TRUNCATE river_job", "VACUUM FULL river_job"} {
		if _, err := pool.Exec(ctx, q); err != nil {
			return res, fmt.Errorf("river reference: %s: %w", q, err)
		}
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		FetchCooldown:     2 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Workers:           workers,
	})
	if err != nil {
		return res, err
	}
	// Counting completions from the subscription, not in Work, includes
	// the completer's trip to the database, as river bench does.
	events, cancelSub := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: riverMinJobs,
		Kinds:    []river.EventKind{river.EventKindJobCompleted},
	})
	defer cancelSub()

	var left atomic.Int64
	if err := topUp(ctx, client, &left); err != nil {
		return res, err
	}
	insertCtx, stopInserting := context.WithCancel(ctx)
	insertDone := make(chan error, 1)
	go func() {
		for {
			select {
			case <-insertCtx.Done():
				insertDone <- nil
				return
			case <-time.After(250 * time.Millisecond):
			}
			if err := topUp(insertCtx, client, &left); err != nil && insertCtx.Err() == nil {
				insertDone <- err
				return
			}
		}
	}()

	var worked atomic.Int64
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		stopInserting()
		return res, err
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
count:
	for {
		select {
		case <-ctx.Done():
			break count
		case <-timer.C:
			break count
		case ev := <-events:
			if ev == nil {
				break count
			}
			worked.Add(1)
			left.Add(-1)
		}
	}
	elapsed := time.Since(start)
	res.Elapsed = duration(elapsed)
	res.JobsWorked = worked.Load()
	res.JobsPerSec = float64(res.JobsWorked) / elapsed.Seconds()

	stopInserting()
	insertErr := <-insertDone
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := client.StopAndCancel(stopCtx); err != nil {
		return res, fmt.Errorf("river reference: stop: %w", err)
	}
	if insertErr != nil {
		return res, fmt.Errorf("river reference: insert: %w", insertErr)
	}
	return res, ctx.Err()
}

// topUp inserts batches until riverMinJobs are waiting, so workers never
// run dry and the insert load stays what the work rate calls for.
func topUp(ctx context.Context, client *river.Client[pgx.Tx], left *atomic.Int64) error {
	batch := make([]river.InsertManyParams, riverInsertBatch)
	for left.Load() < riverMinJobs {
		for i := range batch {
			batch[i].Args = noopArgs{Num: i}
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return err
		}
		left.Add(riverInsertBatch)
	}
	return nil
}
