package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

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
// inbox_outcome row records.
type processed struct {
	inboxID     int64
	outcome     handlers.Outcome
	resourceKey *string
	stale       *bool
}

// jobAttempt is a job this run holds: its id and the attempt River gave
// this run.
type jobAttempt struct {
	id      int64
	attempt int
}

// attemptOf is the jobAttempt a River job is.
func attemptOf[T river.JobArgs](job *river.Job[T]) jobAttempt {
	return jobAttempt{id: job.ID, attempt: job.Attempt}
}

// completeTx records each delivery's outcome and completes the jobs that
// ran them, finalized at finalizedAt, in one statement
// (riverdb.CompleteProcessing): a process_delivery job each, or the one
// process_deliveries job of a batch. It returns a *jobsTakenOverError, and
// tx must be rolled back, when River has given any of the jobs to another
// run meanwhile: completing it regardless, as JobCompleteTx would, would
// complete the other run's attempt or commit these effects beside that
// run's.
func completeTx(ctx context.Context, tx pgx.Tx, js []jobAttempt, ps []processed, finalizedAt time.Time) error {
	// Each table's rows in id order, so concurrent batches normally lock
	// them in the same order; should two still deadlock, PostgreSQL aborts
	// one and its deliveries are processed one by one.
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(x, y processed) int { return cmp.Compare(x.inboxID, y.inboxID) })
	ids, statuses, keys, stales := make([]int64, len(ps)), make([]string, len(ps)), make([]*string, len(ps)), make([]*bool, len(ps))
	for i, p := range ps {
		ids[i], statuses[i], keys[i], stales[i] = p.inboxID, string(p.outcome), p.resourceKey, p.stale
	}
	js = slices.Clone(js)
	slices.SortFunc(js, func(x, y jobAttempt) int { return cmp.Compare(x.id, y.id) })
	jobIDs, attempts := make([]int64, len(js)), make([]int32, len(js))
	for i, j := range js {
		jobIDs[i], attempts[i] = j.id, int32(j.attempt)
	}
	completed, err := riverdb.CompleteProcessing(ctx, tx, riverdb.Completion{
		JobIDs: jobIDs, Attempts: attempts, FinalizedAt: finalizedAt,
		InboxIDs: ids, Statuses: statuses, ResourceKeys: keys, Stales: stales,
	})
	if err != nil {
		return fmt.Errorf("complete jobs: %w", err)
	}
	if len(completed) == len(js) {
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
