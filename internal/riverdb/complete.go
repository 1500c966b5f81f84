package riverdb

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/processing_complete.sql
var processingCompleteSQL string

// Completion is processed deliveries' outcomes and the jobs that ran
// them, as CompleteProcessing records them.
type Completion struct {
	JobIDs      []int64 // the jobs this run holds
	Attempts    []int32 // each job's attempt, as River gave it to this run
	FinalizedAt time.Time
	// The deliveries, each with the outcome its inbox_outcome row records:
	// status (processed or skipped), resource_key and stale (NULL when the
	// handlers named no resource).
	InboxIDs     []int64
	Statuses     []string
	ResourceKeys []*string
	Stales       []*bool
}

// CompleteProcessing records each delivery's outcome (its inbox_pending
// row replaced by an inbox_outcome row) and completes the jobs, as River's
// JobCompleteTx does, in one statement (processing_complete.sql), but only
// those still running under the attempt this run holds: it returns the
// ids of the jobs it completed, and a job missing from them is another
// run's now (River rescued it as stuck). Run in the transaction of the
// deliveries' effects.
//
// The statement is planned for its arguments on every call (pgx's
// QueryExecModeCacheDescribe: still one round trip), never from a cached
// generic plan: one made while the tables were small scans them whole after
// they grew (bench/README.md, Design decisions, "Completing a processing
// batch").
func CompleteProcessing(ctx context.Context, q Querier, c Completion) ([]int64, error) {
	rows, err := q.Query(ctx, processingCompleteSQL, pgx.QueryExecModeCacheDescribe, pgnamed.Args{
		"job_ids": c.JobIDs, "attempts": c.Attempts, "finalized_at": c.FinalizedAt,
		"ids": c.InboxIDs, "statuses": c.Statuses, "resource_keys": c.ResourceKeys, "stales": c.Stales,
	})
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
