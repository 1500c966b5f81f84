package alerts

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// EvaluateArgs is the periodic job that evaluates alerts.
type EvaluateArgs struct{}

func (EvaluateArgs) Kind() string { return "alerts_evaluate" }

func (EvaluateArgs) InsertOpts() river.InsertOpts {
	// One at a time: a run that outlives the period is not doubled.
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// PeriodicJob evaluates alerts every every.
func PeriodicJob(every time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) { return EvaluateArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}

// Worker runs one evaluation in a transaction of its own.
type Worker struct {
	river.WorkerDefaults[EvaluateArgs]
	pool      *pgxpool.Pool
	evaluator *Evaluator
	logger    *slog.Logger
}

// NewWorker evaluates with e on pool.
func NewWorker(pool *pgxpool.Pool, e *Evaluator, logger *slog.Logger) *Worker {
	return &Worker{pool: pool, evaluator: e, logger: logger}
}

func (w *Worker) Work(ctx context.Context, _ *river.Job[EvaluateArgs]) error {
	var opened, resolved int
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		var err error
		opened, resolved, err = w.evaluator.EvaluateTx(ctx, tx)
		return err
	})
	if err != nil {
		return err
	}
	if opened+resolved > 0 {
		w.logger.Info("alerts evaluated", "opened", opened, "resolved", resolved)
	}
	return nil
}
