// Package jobs holds hookinbox's River job kinds and their workers.
package jobs

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

//go:embed sql/inbox_mark_processed.sql
var inboxMarkProcessedSQL string

// QueueDeliveries is the queue inbox processing runs on, apart from any
// queue a user's follow-up jobs use.
const QueueDeliveries = "deliveries"

// ProcessDeliveryArgs asks a worker to process one inbox row. It is enqueued
// in the same transaction that inserts the row.
type ProcessDeliveryArgs struct {
	InboxID int64 `json:"inbox_id"`
}

func (ProcessDeliveryArgs) Kind() string { return "process_delivery" }

func (ProcessDeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeliveries}
}

// ProcessDeliveryWorker processes an inbox row. Until per-event handlers
// exist it only marks the row processed, but already in the shape they need:
// the row's update and the job's completion commit in one transaction.
type ProcessDeliveryWorker struct {
	river.WorkerDefaults[ProcessDeliveryArgs]
	pool *pgxpool.Pool
}

func NewProcessDeliveryWorker(pool *pgxpool.Pool) *ProcessDeliveryWorker {
	return &ProcessDeliveryWorker{pool: pool}
}

func (w *ProcessDeliveryWorker) Work(ctx context.Context, job *river.Job[ProcessDeliveryArgs]) error {
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, inboxMarkProcessedSQL, pgx.NamedArgs{"id": job.Args.InboxID}); err != nil {
			return fmt.Errorf("mark inbox row %d processed: %w", job.Args.InboxID, err)
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}
