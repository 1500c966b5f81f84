package jobs

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/processing_complete.sql
var processingCompleteSQL string

// errJobTakenOver: River took the job for stuck and ran it again while a
// run held it; that other run decides the delivery.
var errJobTakenOver = errors.New("River gave this job to another run meanwhile; not completed by this one")

// jobsTakenOverError names jobs that were no longer running under the
// attempt this run held.
type jobsTakenOverError struct{ ids []int64 }

func (e *jobsTakenOverError) Error() string {
	return fmt.Sprintf("jobs %v are no longer running under the attempt this run holds", e.ids)
}

// processed is a delivery whose handlers ran: the outcome its
// inbox_outcome row records, and the job that ran it.
type processed struct {
	job         *river.Job[ProcessDeliveryArgs]
	outcome     handlers.Outcome
	resourceKey *string
	stale       *bool
}

// completeTx records each delivery's outcome (its inbox_pending row replaced
// by an inbox_outcome row) and completes its job, finalized at finalizedAt,
// in one statement
// (processing_complete.sql). It returns a *jobsTakenOverError, and tx must
// be rolled back, when River has given any of the jobs to another run
// meanwhile: completing it regardless, as JobCompleteTx would, would
// complete the other run's attempt or commit these effects beside that
// run's.
//
// The statement is planned for its arguments on every call (pgx's
// QueryExecModeCacheDescribe: still one round trip), never from a cached
// generic plan: one made while the tables were small scans them whole
// after they grew (bench/README.md, "Stop 26").
func completeTx(ctx context.Context, tx pgx.Tx, ps []processed, finalizedAt time.Time) error {
	// Each table's rows in id order, so concurrent batches normally lock
	// them in the same order; should two still deadlock, PostgreSQL aborts
	// one and its deliveries are processed one by one.
	n := len(ps)
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(x, y processed) int { return cmp.Compare(x.job.Args.InboxID, y.job.Args.InboxID) })
	ids, statuses, keys, stales := make([]int64, n), make([]string, n), make([]*string, n), make([]*bool, n)
	for i, p := range ps {
		ids[i], statuses[i], keys[i], stales[i] = p.job.Args.InboxID, string(p.outcome), p.resourceKey, p.stale
	}
	slices.SortFunc(ps, func(x, y processed) int { return cmp.Compare(x.job.ID, y.job.ID) })
	jobIDs, attempts := make([]int64, n), make([]int32, n)
	for i, p := range ps {
		jobIDs[i], attempts[i] = p.job.ID, int32(p.job.Attempt)
	}
	rows, err := tx.Query(ctx, processingCompleteSQL, pgx.QueryExecModeCacheDescribe, pgnamed.Args{
		"job_ids": jobIDs, "attempts": attempts, "finalized_at": finalizedAt,
		"ids": ids, "statuses": statuses, "resource_keys": keys, "stales": stales,
	})
	if err != nil {
		return fmt.Errorf("complete jobs: %w", err)
	}
	completed, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("complete jobs: %w", err)
	}
	if len(completed) == n {
		return nil
	}
	var taken []int64
	for _, id := range jobIDs {
		if !slices.Contains(completed, id) {
			taken = append(taken, id)
		}
	}
	return &jobsTakenOverError{ids: taken}
}
