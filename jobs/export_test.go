package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

var (
	ReindexedIndexes    = reindexedIndexes
	RetentionInsertOpts = retentionInsertOpts
)

const (
	DetachedComment  = inbox.DetachedComment
	KeyGenerationIDs = inbox.KeyGenerationIDs
)

// CompleteProcessedTx is completeTx for jobs whose deliveries were
// processed.
func CompleteProcessedTx(ctx context.Context, tx pgx.Tx, js []*river.Job[ProcessDeliveryArgs]) error {
	return CompleteProcessedAtTx(ctx, tx, js, time.Now())
}

// CompleteProcessedAtTx is CompleteProcessedTx finalizing the jobs at
// finalizedAt.
func CompleteProcessedAtTx(ctx context.Context, tx pgx.Tx, js []*river.Job[ProcessDeliveryArgs], finalizedAt time.Time) error {
	ps, as := make([]processed, len(js)), make([]jobAttempt, len(js))
	for i, j := range js {
		ps[i], as[i] = processed{inboxID: j.Args.InboxID, outcome: handlers.OutcomeProcessed}, attemptOf(j)
	}
	return completeTx(ctx, tx, as, ps, finalizedAt)
}

var QueueConfigs = queueConfigs

// Names the package keeps unexported, as it exports only what a library
// user calls.
const (
	IngestMinuteRetention = ingestMinuteRetention
	HoldNote              = holdNote
	QueueDeliveries       = queueDeliveries
)

type OrphanSweepResult = orphanSweepResult

// EnsurePartition makes the inbox's next partition if it is due, and
// returns its name and bounds ("" when none was due).
func EnsurePartition(ctx context.Context, pool *pgxpool.Pool, span time.Duration, minIDs int64, now time.Time) (string, int64, int64, error) {
	p, err := partitions(pool, RetentionConfig{PartitionSpan: span, PartitionMin: minIDs}, nil).Ensure(ctx, now)
	if p == nil {
		return "", 0, 0, err
	}
	return p.Name, p.Lo, p.Hi, err
}

// RetirePartitions drops the partitions a pass as of now would, and
// leaves their keys.
func (w *RetentionWorker) RetirePartitions(ctx context.Context, now time.Time) error {
	_, err := partitions(w.pool, w.cfg, w.logger).Retire(ctx, now.Add(-w.cfg.Default))
	return err
}

// OpenKeyGeneration opens the next generation of the inbox's keys if the
// current one has been open for every, and returns its table ("" when
// none was due). It waits up to 10 s for the key generations' fence.
func OpenKeyGeneration(ctx context.Context, pool *pgxpool.Pool, every time.Duration, now time.Time) (string, error) {
	parts := partitions(pool, RetentionConfig{PartitionSpan: 24 * time.Hour, PartitionMin: 1000, KeyGeneration: every}, nil)
	parts.FenceTimeout = "10s"
	g, err := parts.OpenKeyGeneration(ctx, now)
	if g == nil {
		return "", err
	}
	return g.Name(), err
}

// Cycle is one of a started Generation's looks: publish, look, apply,
// record.
func (g *Generation) Cycle(ctx context.Context) error { return g.cycle(ctx) }
