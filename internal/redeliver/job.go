package redeliver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// DefaultWindow is the Worker's look-back when NewWorker is given none:
// twice a 30-minute period.
const DefaultWindow = time.Hour

// Args asks for one redelivery pass over a source's GitHub hook.
type Args struct {
	Source string `json:"source"`
}

func (Args) Kind() string { return "github_redeliver" }

// InsertOpts makes a pass unique per source and minute, so a periodic
// schedule on several processes, or an operator's extra insert, runs one
// pass rather than several.
//
// MaxAttempts is 1: a pass that fails (GitHub down, a revoked token) is not
// retried, because the next period's pass covers the same deliveries (its
// window overlaps) and River's retries of old passes would only add calls
// to a GitHub that is already refusing them. The failure stays visible as a
// discarded job with its error.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       river.QueueDefault,
		MaxAttempts: 1,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByPeriod: time.Minute},
	}
}

// PeriodicJob schedules a pass over source every period, and one when the
// client starts. Give NewWorker a window of about twice period.
func PeriodicJob(source string, period time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(period),
		func() (river.JobArgs, *river.InsertOpts) { return Args{Source: source}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}

// Worker runs redelivery passes for the sources it is configured with.
type Worker struct {
	river.WorkerDefaults[Args]
	pool    *pgxpool.Pool
	configs map[string]Config
	window  time.Duration
	logger  *slog.Logger
	now     func() time.Time
}

// NewWorker returns a Worker that, for a job's source, redelivers the
// deliveries first attempted within window before now. configs maps source
// names to their hook (Config.Source should equal the key). window should
// be about twice the schedule's period, so a pass that was late, failed or
// ran while GitHub was still retrying its connection is covered by the
// next one; GitHub keeps deliveries for a few days, and a longer window
// costs only more pages per pass. window <= 0 means DefaultWindow. A nil
// logger discards.
func NewWorker(pool *pgxpool.Pool, configs map[string]Config, window time.Duration, logger *slog.Logger) *Worker {
	if window <= 0 {
		window = DefaultWindow
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{pool: pool, configs: configs, window: window, logger: logger, now: time.Now}
}

func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	cfg, ok := w.configs[job.Args.Source]
	if !ok {
		// Configuration changed since the job was scheduled; no retry fixes it.
		return river.JobCancel(fmt.Errorf("redeliver: source %q has no GitHub redelivery configured", job.Args.Source))
	}
	since := w.now().Add(-w.window)
	start := time.Now()
	res, err := Redeliver(ctx, w.pool, cfg, since)
	log := w.logger.With("source", job.Args.Source, "since", since.UTC().Format(time.RFC3339), "job_id", job.ID)
	if err != nil {
		log.Error("github redelivery pass failed", "error", err)
		return err
	}
	level := slog.LevelInfo
	if len(res.Errors) > 0 {
		level = slog.LevelWarn
	}
	log.Log(ctx, level, "github redelivery pass",
		"examined", res.Examined, "failed", res.Failed, "already_in_inbox", res.AlreadyInInbox,
		"redelivered", res.Redelivered, "errors", res.Errors, "duration", time.Since(start).String())
	return nil
}
