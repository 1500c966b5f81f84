package handlers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/handler_step_insert.sql
	handlerStepInsertSQL string
	//go:embed sql/handler_step_set_job.sql
	handlerStepSetJobSQL string
	//go:embed sql/handler_step_job.sql
	handlerStepJobSQL string
	//go:embed sql/handler_step_record_job.sql
	handlerStepRecordJobSQL string
)

// JobInserter enqueues River jobs inside a transaction.
// *river.Client[pgx.Tx] satisfies it.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Event is what a handler receives for one delivery.
type Event struct {
	Delivery

	// Resource is what the delivery is about, for ordering.
	Resource Resource

	// Stale is true when a newer event was already applied to Resource.
	// LatestState handlers never see stale events.
	Stale bool

	// Tx is the transaction the handler's writes belong to. It commits with
	// the delivery's outcome and the job's completion; do not commit or
	// roll it back.
	Tx pgx.Tx

	// Logger carries the delivery's source, delivery id and inbox id.
	Logger *slog.Logger

	handler      string
	jobs         JobInserter
	wait         bool               // false in a processing batch: see lock
	deferred     []*pgx.QueuedQuery // Defer's statements, in the order queued
	deferredRows []deferredRow      // DeferRow's rows, in the order queued
}

// Lock takes the transaction-scoped advisory lock named key, serialising
// this delivery's handler with every transaction that takes the same lock
// (LockTx): a follow-up job and a handler that book the same money, say.
// In a processing batch, which holds other deliveries' locks, it does not
// wait (two batches could wait on each other): it returns ErrResourceBusy,
// and the handler returns that error, so that the delivery is processed
// alone, where Lock waits. See LockTx for the keys.
func (e *Event) Lock(ctx context.Context, key string) error {
	return advisoryLock(ctx, e.Tx, key, e.wait)
}

// Key returns the downstream idempotency key for step: stable across
// retries and replays of this delivery, distinct for every other delivery,
// handler and step. Send it as Idempotency-Key on the call the step makes.
func (e *Event) Key(step string) string {
	return DeriveKey(e.Source, e.DeliveryID, e.handler, step)
}

// KeyFor returns the downstream idempotency key for step on the business
// intent that naturalKey names (a release's repository and tag, an
// invoice's id). It is derived from (source, handler, step, naturalKey…),
// not from the delivery (DeriveIntentKey): every delivery that describes
// the same intent, a provider's resend with a new delivery id included,
// gets the same key, so the downstream applies the intent once. With no
// naturalKey, every delivery of the source shares one key.
func (e *Event) KeyFor(step string, naturalKey ...string) string {
	return DeriveIntentKey(e.Source, e.handler, step, naturalKey...)
}

// Enqueue inserts a follow-up job in the handler's transaction: it exists
// exactly when the handler's effects commit.
func (e *Event) Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return e.jobs.InsertTx(ctx, e.Tx, args, opts)
}

// EnqueueOnce inserts a follow-up job for step unless this delivery's
// handler already enqueued that step, on an earlier attempt or replay that
// committed. It reports whether it inserted. The decision is a primary key
// insert in the same transaction as the job, so it holds under races and
// outlives River's pruning of completed jobs.
func (e *Event) EnqueueOnce(ctx context.Context, step string, args river.JobArgs, opts *river.InsertOpts) (bool, error) {
	return e.EnqueueOnceForKey(ctx, e.Key(step), step, args, opts)
}

// EnqueueOnceForKey is EnqueueOnce deciding on key instead of this
// delivery's Key(step): it inserts the follow-up job for step unless a job
// was already enqueued under key, by this delivery or by any other. With
// KeyFor(step, …) that is once per business intent. The step's record
// (handler_step) names the delivery that enqueued it first.
func (e *Event) EnqueueOnceForKey(ctx context.Context, key, step string, args river.JobArgs, opts *river.InsertOpts) (bool, error) {
	return EnqueueOnceTx(ctx, e.Tx, e.jobs, Step{
		Key: key, Source: e.Source, DeliveryID: e.DeliveryID, Handler: e.handler, Name: step,
	}, args, opts)
}

// Step is a handler's step as EnqueueOnce records it (table handler_step):
// the follow-up job enqueued under Key, and the delivery and handler that
// enqueued it first.
type Step struct {
	// Key decides: one job per key. Event.Key(Name) for a step of one
	// delivery, Event.KeyFor(Name, …) for a step of one business intent.
	Key string
	// Source and DeliveryID name the delivery the step belongs to.
	Source, DeliveryID string
	// Handler is the Registration's Name.
	Handler string
	// Name is the step ("fulfill", "refund"), as passed to Event.Key.
	Name string
}

// EnqueueOnceTx is Event.EnqueueOnceForKey for code outside a handler,
// such as a follow-up job that enqueues a compensation: it inserts args'
// job in tx unless a job was already enqueued under step.Key, and reports
// whether it inserted. A follow-up job's jobs is the River client it runs
// under (river.ClientFromContext).
func EnqueueOnceTx(ctx context.Context, tx pgx.Tx, jobs JobInserter, step Step, args river.JobArgs, opts *river.InsertOpts) (bool, error) {
	var key string
	err := tx.QueryRow(ctx, handlerStepInsertSQL, pgnamed.Args{
		"key": step.Key, "source": step.Source, "delivery_id": step.DeliveryID,
		"handler": step.Handler, "step": step.Name,
	}).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // enqueued by an earlier, committed run
	}
	if err != nil {
		return false, fmt.Errorf("record step %s: %w", step.Name, err)
	}
	res, err := jobs.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return false, fmt.Errorf("enqueue step %s: %w", step.Name, err)
	}
	if _, err := tx.Exec(ctx, handlerStepSetJobSQL, pgnamed.Args{"job_id": res.Job.ID, "key": step.Key}); err != nil {
		return false, fmt.Errorf("record step %s job: %w", step.Name, err)
	}
	return true, nil
}

// jobRetrier makes a finished job available again inside a transaction.
// *river.Client[pgx.Tx] satisfies it.
type jobRetrier interface {
	JobRetryTx(ctx context.Context, tx pgx.Tx, id int64) (*rivertype.JobRow, error)
}

// errStepStillRunning: the step's job is still in its last attempt.
var errStepStillRunning = errors.New("the step's job is still running its last attempt; retry the resume once it has ended")

// RerunStep makes the job of a step recorded by EnqueueOnce (or
// EnqueueOnceTx) run again, in the handler's transaction, with args, which
// must be the step's args, and so its key: it is how a handler resumes a
// step that failed for good when its delivery is replayed. It runs
// River's JobRetryTx on the recorded job (which gives a job that used up
// its attempts one more), or, when River no longer holds it, enqueues args
// anew and records them under step.Key. A job still in its last attempt
// is not touched: RerunStep returns an error, and River retries the
// delivery.
func (e *Event) RerunStep(ctx context.Context, step Step, args river.JobArgs) error {
	tx, jobs := e.Tx, e.jobs
	retrier, ok := jobs.(jobRetrier)
	if !ok {
		return fmt.Errorf("rerun step %s: %T cannot retry jobs", step.Name, jobs)
	}
	// retry reports false when River no longer has the job.
	retry := func(id int64) (bool, error) {
		job, err := retrier.JobRetryTx(ctx, tx, id)
		switch {
		case errors.Is(err, rivertype.ErrNotFound):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("retry step %s job %d: %w", step.Name, id, err)
		case job.State == rivertype.JobStateRunning:
			return false, errStepStillRunning
		}
		return true, nil
	}
	var jobID *int64
	if err := tx.QueryRow(ctx, handlerStepJobSQL, pgnamed.Args{"key": step.Key}).Scan(&jobID); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read step %s: %w", step.Name, err)
	}
	if jobID != nil {
		if retried, err := retry(*jobID); retried || err != nil {
			return err
		}
	}
	// River pruned the job after it ended, or retention deleted the step.
	res, err := jobs.InsertTx(ctx, tx, args, nil)
	if err != nil {
		return fmt.Errorf("enqueue step %s: %w", step.Name, err)
	}
	if _, err := tx.Exec(ctx, handlerStepRecordJobSQL, pgnamed.Args{
		"key": step.Key, "source": step.Source, "delivery_id": step.DeliveryID,
		"handler": step.Handler, "step": step.Name, "job_id": res.Job.ID,
	}); err != nil {
		return fmt.Errorf("record step %s job: %w", step.Name, err)
	}
	if res.UniqueSkippedAsDuplicate { // River holds a job with these args after all
		_, err = retry(res.Job.ID)
	}
	return err
}
