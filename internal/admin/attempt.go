package admin

import (
	"fmt"
	"slices"

	"github.com/hookinbox/hookinbox/jobs"
)

// EnqueuedBy says, for a person, why a processing job exists: the job
// ingest enqueued for the delivery alone or for its whole ingest batch,
// one that batch's job gave the delivery when it could not decide it in
// the batch (a busy resource, a handler that failed), a replay's, or the
// orphan sweep's, when River had no job left to process it. The console
// and `hookinbox deliveries N` show it, so that a delivery with two jobs
// reads as what happened rather than as a duplicate.
func (a Attempt) EnqueuedBy() string {
	switch {
	case a.ReplayID != nil:
		return fmt.Sprintf("Replay #%d", *a.ReplayID)
	case a.Kind == (jobs.ProcessDeliveriesArgs{}).Kind():
		return "Ingest, with its batch"
	case slices.Contains(a.Tags, jobs.TagFromBatch):
		return "Its batch, alone"
	case slices.Contains(a.Tags, jobs.TagOrphanSweep):
		return "Orphan sweep: its job was discarded or deleted"
	default:
		return "Ingest"
	}
}

// DeliveryAttempt is the job's attempt and its last as the delivery's:
// counting the attempts of the batch job before it (AttemptsBefore), so
// that a delivery retried by a job of its own reads "attempt 2 of 25", not
// "1 of 24".
func (a Attempt) DeliveryAttempt() (n, of int) {
	return a.AttemptsBefore + a.Attempt, a.AttemptsBefore + a.MaxAttempts
}
