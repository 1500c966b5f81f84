package jobs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

//go:embed sql/bulk_replay_advance.sql
var bulkReplayAdvanceSQL string

// MaxBulkReplay bounds one bulk replay; DefaultBulkReplayLimit applies when
// a filter names no limit.
const (
	MaxBulkReplay          = 100_000
	DefaultBulkReplayLimit = 1000
)

// ReplayFilter selects stored deliveries. Nil fields do not filter.
type ReplayFilter struct {
	Source    *string    `json:"source,omitempty"`
	Status    *string    `json:"status,omitempty"`
	EventType *string    `json:"event_type,omitempty"`
	Since     *time.Time `json:"since,omitempty"` // received at or after
	Until     *time.Time `json:"until,omitempty"` // received before
	Limit     int        `json:"limit"`           // at most this many, oldest first. Defaults to DefaultBulkReplayLimit.
}

func (f ReplayFilter) selection() inbox.Selection {
	return inbox.Selection{Source: f.Source, Status: f.Status, EventType: f.EventType, Since: f.Since, Until: f.Until}
}

// BulkReplay is a bulk replay's progress.
type BulkReplay struct {
	ID         int64        `json:"bulk_replay_id"`
	Filter     ReplayFilter `json:"filter"`
	State      string       `json:"state"`    // running | finished
	Matched    int          `json:"matched"`  // deliveries the filter selected when the replay was created
	Enqueued   int          `json:"enqueued"` // replay jobs enqueued so far (a delivery deleted meanwhile is skipped)
	Done       int          `json:"done"`     // of those, finished
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at"` // when the last batch was enqueued
}

// ErrNotFound means no row has the id asked for.
var ErrNotFound = errors.New("not found")

// StartBulkReplayTx records a bulk replay of the deliveries f selects now
// (later arrivals are not included) and enqueues the job that replays them
// in batches: nothing is replayed inside the caller's transaction.
func StartBulkReplayTx(ctx context.Context, tx pgx.Tx, jobs Inserter, f ReplayFilter) (BulkReplay, error) {
	if f.Limit == 0 {
		f.Limit = DefaultBulkReplayLimit
	}
	if f.Limit < 0 || f.Limit > MaxBulkReplay {
		return BulkReplay{}, fmt.Errorf("limit must be between 1 and %d", MaxBulkReplay)
	}
	id, err := inbox.RecordBulkReplay(ctx, tx, f, f.selection(), f.Limit)
	if err != nil {
		return BulkReplay{}, fmt.Errorf("record bulk replay: %w", err)
	}
	if _, err := jobs.InsertTx(ctx, tx, bulkReplayArgs{BulkReplayID: id}, nil); err != nil {
		return BulkReplay{}, fmt.Errorf("enqueue bulk replay: %w", err)
	}
	return GetBulkReplay(ctx, tx, id)
}

// Querier is a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// GetBulkReplay reads a bulk replay's progress, or ErrNotFound.
func GetBulkReplay(ctx context.Context, q Querier, id int64) (BulkReplay, error) {
	var b BulkReplay
	err := riverdb.BulkReplay(ctx, q, id).
		Scan(&b.ID, &b.Filter, &b.State, &b.Matched, &b.Enqueued, &b.Done, &b.CreatedAt, &b.FinishedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return BulkReplay{}, ErrNotFound
	}
	return b, err
}

// bulkReplayArgs asks for a bulk replay's batches to be enqueued.
type bulkReplayArgs struct {
	BulkReplayID int64 `json:"bulk_replay_id"`
}

func (bulkReplayArgs) Kind() string { return "bulk_replay" }

// bulkReplayWorker enqueues a bulk replay's jobs in batches, each batch and
// the cursor's move in one transaction, so a crash resumes without
// enqueueing a delivery twice.
type bulkReplayWorker struct {
	river.WorkerDefaults[bulkReplayArgs]
	pool      *pgxpool.Pool
	batchSize int
	budget    time.Duration // work per run before snoozing to continue
	logger    *slog.Logger
}

// defaultBulkReplayBatch is how many replays one transaction enqueues.
const defaultBulkReplayBatch = 500

func newBulkReplayWorker(pool *pgxpool.Pool, budget time.Duration, logger *slog.Logger) *bulkReplayWorker {
	return &bulkReplayWorker{pool: pool, batchSize: defaultBulkReplayBatch, budget: budget, logger: logger}
}

func (w *bulkReplayWorker) Work(ctx context.Context, job *river.Job[bulkReplayArgs]) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	start := time.Now()
	for {
		finished, err := w.batch(ctx, client, job)
		if err != nil || finished {
			return err
		}
		if time.Since(start) > w.budget {
			// Each batch committed its position: continue in a new run,
			// well inside River's job timeout and stuck-job rescue.
			return river.JobSnooze(0)
		}
	}
}

func (w *bulkReplayWorker) batch(ctx context.Context, client *river.Client[pgx.Tx], job *river.Job[bulkReplayArgs]) (bool, error) {
	var finished bool
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		next, err := inbox.LockBulkReplayBatch(ctx, tx, job.Args.BulkReplayID, w.batchSize)
		if errors.Is(err, pgx.ErrNoRows) {
			return river.JobCancel(fmt.Errorf("bulk replay %d not found", job.Args.BulkReplayID))
		}
		if err != nil {
			return err
		}
		ids, consumed := next.IDs, next.Consumed
		if next.State != "running" {
			ids, consumed = nil, 0
		}
		if _, err := ReplayTx(ctx, tx, client, ids, &job.Args.BulkReplayID); err != nil {
			return err
		}
		finished = next.Position+consumed >= next.Total
		if _, err := tx.Exec(ctx, bulkReplayAdvanceSQL, pgx.NamedArgs{
			"id": job.Args.BulkReplayID, "consumed": consumed, "added": len(ids), "finished": finished,
		}); err != nil {
			return err
		}
		if finished {
			_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
			w.logger.Info("bulk replay enqueued", "bulk_replay_id", job.Args.BulkReplayID, "matched", next.Total)
		}
		return err
	})
	return finished, err
}
