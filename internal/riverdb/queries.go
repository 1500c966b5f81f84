package riverdb

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/job_counts.sql
	jobCountsSQL string
	//go:embed sql/delivery_attempts.sql
	deliveryAttemptsSQL string
	//go:embed sql/delivery_keys.sql
	deliveryKeysSQL string
	//go:embed sql/replay_get.sql
	replayGetSQL string
	//go:embed sql/orphan_sweep_find.sql
	orphanSweepFindSQL string
	//go:embed sql/payment_saga_sweep.sql
	paymentSagaSweepSQL string
	//go:embed sql/bulk_replay_get.sql
	bulkReplayGetSQL string
	//go:embed sql/processing_stalled.sql
	processingStalledSQL string
)

// Querier is a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	RowQuerier
}

// RowQuerier is a Querier that is only asked for single rows.
type RowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The functions below run one statement each and leave the rows to the
// caller, which scans them into its own types; each says the columns it
// returns, in order.

// JobCounts counts River's jobs by queue and state (job_counts.sql).
// Columns: queue text, state text, count float8.
func JobCounts(ctx context.Context, q Querier) (pgx.Rows, error) {
	return q.Query(ctx, jobCountsSQL)
}

// DeliveryAttempts reads the processing jobs of the delivery with inbox id
// id, with River's record of each attempt (delivery_attempts.sql).
// Columns: id, kind, tags, state, attempt, max_attempts, errors,
// created_at, finalized_at, replay_id, attempts_before.
func DeliveryAttempts(ctx context.Context, q Querier, id int64) (pgx.Rows, error) {
	return q.Query(ctx, deliveryAttemptsSQL, pgx.NamedArgs{"id": id})
}

// DeliveryKeys reads the downstream keys a delivery's handlers derived,
// with their jobs' states (delivery_keys.sql). Columns: handler, step,
// key, job_id, job state (NULL once River pruned the job), created_at.
func DeliveryKeys(ctx context.Context, q Querier, source, deliveryID string) (pgx.Rows, error) {
	return q.Query(ctx, deliveryKeysSQL, pgx.NamedArgs{"source": source, "delivery_id": deliveryID})
}

// Replay reads one replay with its delivery and its job's state
// (replay_get.sql); pgx.ErrNoRows when there is none. Columns: replay id,
// inbox id, source, delivery_id, job_id, job state (NULL once River
// pruned the job), bulk_replay_id, requested_at.
func Replay(ctx context.Context, q RowQuerier, id int64) pgx.Row {
	return q.QueryRow(ctx, replayGetSQL, pgx.NamedArgs{"id": id})
}

// OrphanWindow is one window of the orphan sweep (orphan_sweep_find.sql
// says what each field decides).
type OrphanWindow struct {
	After    int64     // the window starts after this inbox id
	Cutoff   time.Time // deliveries and jobs younger than this are left alone
	Scan     int       // the most pending rows the window holds
	Batch    int       // the most orphans returned
	HoldNote string    // last_error written on a cancelled job's delivery; %s is the job's id
	HeldLike string    // LIKE pattern of a HoldNote
}

// FindOrphans reads an orphan sweep's window in tx, locking the orphans it
// returns (orphan_sweep_find.sql). Columns: scanned, last_id, inbox_id,
// last_job_id, last_job_state; inbox_id is NULL on the one row of a window
// without orphans.
func FindOrphans(ctx context.Context, tx pgx.Tx, w OrphanWindow) (pgx.Rows, error) {
	return tx.Query(ctx, orphanSweepFindSQL, pgnamed.Args{
		"after": w.After, "cutoff": w.Cutoff, "scan": w.Scan, "batch": w.Batch,
		"hold_note": w.HoldNote, "held_like": w.HeldLike,
	})
}

// FailStalledSagas marks failed the payment sagas whose step's job River
// will never run again (payment_saga_sweep.sql). Columns: payment_intent,
// source, delivery_id, failed_step, last_error.
func FailStalledSagas(ctx context.Context, q Querier) (pgx.Rows, error) {
	return q.Query(ctx, paymentSagaSweepSQL)
}

// BulkReplay reads a bulk replay's progress (bulk_replay_get.sql), done
// counting its replays whose job River finished or pruned; pgx.ErrNoRows
// when there is none. Columns: id, filter, state, matched, enqueued, done,
// created_at, finished_at.
func BulkReplay(ctx context.Context, q RowQuerier, id int64) pgx.Row {
	return q.QueryRow(ctx, bulkReplayGetSQL, pgx.NamedArgs{"id": id})
}

// ProcessingStalled reports whether a job of queue has been available for
// longer than due (waiting) and whether one is running (working)
// (processing_stalled.sql): what an outdated process, which fetches no
// processing job, looks at to tell whether the newer processes take them.
func ProcessingStalled(ctx context.Context, q RowQuerier, queue string, due time.Duration) (waiting, working bool, err error) {
	err = q.QueryRow(ctx, processingStalledSQL, pgnamed.Args{"queue": queue, "due_secs": due.Seconds()}).Scan(&waiting, &working)
	return waiting, working, err
}
