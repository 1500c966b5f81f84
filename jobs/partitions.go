package jobs

import (
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

//go:embed sql/partition_replays_delete.sql
var partitionReplaysDeleteSQL string

// partitionLockTimeout bounds how long making or dropping a partition
// waits for the inbox's lock. Ingest queues behind a waiting exclusive
// lock, so the wait is short; a busy inbox is tried again the next pass.
const partitionLockTimeout = "500ms"

// partitions is the inbox's lifecycle as cfg sets it. A partition is not
// dropped while a delivery of it has work left in River's jobs, handler
// steps or destination sends; its replay records go with it.
func partitions(pool *pgxpool.Pool, cfg RetentionConfig, logger *slog.Logger) *inbox.Partitions {
	return &inbox.Partitions{
		Pool: pool, Span: cfg.PartitionSpan, MinIDs: cfg.PartitionMin, KeyGeneration: cfg.KeyGeneration,
		LockTimeout: partitionLockTimeout, Pause: cfg.Pause, Logger: logger,
		Busy: func(ctx context.Context, q inbox.Querier, lo, hi int64) (bool, error) {
			return riverdb.PartitionBusy(ctx, q, lo, hi)
		},
		Dropping: func(ctx context.Context, tx pgx.Tx, lo, hi int64) error {
			_, err := tx.Exec(ctx, partitionReplaysDeleteSQL, pgx.NamedArgs{"lo": lo, "hi": hi})
			return err
		},
	}
}

// inboxPartitionsArgs opens the next generation of the inbox's keys and
// makes the inbox's next partition, each when it is due.
// River's leader enqueues it every minute.
type inboxPartitionsArgs struct{}

func (inboxPartitionsArgs) Kind() string { return "inbox_partitions" }

func inboxPartitionsPeriodicJob() *river.PeriodicJob {
	const every = time.Minute
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		return inboxPartitionsArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: every}}
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

type inboxPartitionsWorker struct {
	river.WorkerDefaults[inboxPartitionsArgs]
	pool   *pgxpool.Pool
	cfg    RetentionConfig
	logger *slog.Logger
}

func (w *inboxPartitionsWorker) Work(ctx context.Context, _ *river.Job[inboxPartitionsArgs]) error {
	if w.logger == nil {
		w.logger = slog.New(slog.DiscardHandler)
	}
	now := time.Now()
	parts := partitions(w.pool, w.cfg, w.logger)
	g, genErr := parts.OpenKeyGeneration(ctx, now)
	if inbox.IsLockTimeout(genErr) {
		w.logger.Info("inbox partitions: the inbox is busy; opening the next key generation next minute", "error", genErr)
		genErr = nil
	}
	if g != nil {
		lo, hi := g.IDs()
		w.logger.Info("inbox key generation opened", "generation", g.Name(), "from_id", lo, "to_id", hi)
	}
	// The next partition is made all the same: ingest needs it first.
	p, err := parts.Ensure(ctx, now)
	if inbox.IsLockTimeout(err) {
		w.logger.Info("inbox partitions: the inbox is busy; trying again next minute", "error", err)
		err = nil
	}
	if p != nil {
		w.logger.Info("inbox partition made", "partition", p.Name, "from_id", p.Lo, "to_id", p.Hi)
	}
	return errors.Join(genErr, err)
}
