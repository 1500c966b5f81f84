package jobs

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

//go:embed sql/replay_insert.sql
var replayInsertSQL string

// Inserter enqueues jobs inside a transaction; *river.Client[pgx.Tx] is one.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Replay is one enqueued re-run of a stored delivery.
type Replay struct {
	ID      int64 `json:"replay_id"`
	InboxID int64 `json:"inbox_id"`
	JobID   int64 `json:"job_id"`
}

// ReplayTx enqueues a processing job for each inbox row and records each
// replay, all in tx. Handlers are idempotent and their keys derive from the
// delivery, so replaying a processed delivery causes no new effect.
func ReplayTx(ctx context.Context, tx pgx.Tx, jobs Inserter, inboxIDs []int64, bulkReplayID *int64) ([]Replay, error) {
	if len(inboxIDs) == 0 {
		return nil, nil
	}
	params := make([]river.InsertManyParams, len(inboxIDs))
	for i, id := range inboxIDs {
		params[i] = river.InsertManyParams{Args: ProcessDeliveryArgs{InboxID: id}}
	}
	results, err := jobs.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, fmt.Errorf("enqueue replays: %w", err)
	}
	jobIDs := make([]int64, len(results))
	for i, res := range results {
		jobIDs[i] = res.Job.ID
	}
	rows, err := tx.Query(ctx, replayInsertSQL, pgx.NamedArgs{
		"inbox_ids": inboxIDs, "job_ids": jobIDs, "bulk_replay_id": bulkReplayID,
	})
	if err != nil {
		return nil, fmt.Errorf("record replays: %w", err)
	}
	replays, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Replay])
	if err != nil {
		return nil, fmt.Errorf("record replays: %w", err)
	}
	return replays, nil
}
