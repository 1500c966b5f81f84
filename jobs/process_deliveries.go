package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

// ProcessDeliveriesArgs asks a worker to run the handlers for several inbox
// rows in one transaction: ingest enqueues one for a batch of accepted
// deliveries (ingest.job_per_batch) instead of a process_delivery job each.
// A River job is three row versions with an entry in each of River's job
// table's indexes (inserted, fetched, completed), a large share of the
// database's work per delivery (bench/README.md, Design decisions, "Job per
// ingest batch"); one job for a batch pays that once.
//
// InboxIDs are in ascending order.
type ProcessDeliveriesArgs struct {
	InboxIDs []int64 `json:"inbox_ids"`
}

func (ProcessDeliveriesArgs) Kind() string { return "process_deliveries" }

// TagFromBatch marks a process_delivery job a process_deliveries job
// enqueued for a delivery it did not decide (in River UI, and for telling
// it from ingest's and replays' jobs).
const TagFromBatch = "from_batch"

// fromBatch is the insert of such a job, available at once; alone when it
// must not join a batch.
func fromBatch(inboxID int64, alone bool) river.InsertManyParams {
	return river.InsertManyParams{Args: ProcessDeliveryArgs{InboxID: inboxID, Alone: alone},
		InsertOpts: &river.InsertOpts{Tags: []string{TagFromBatch}}}
}

// retryFromBatch is the insert of the job that retries a delivery whose
// handler failed in its batch job's attempt `before` (the batch job's
// attempts count as the delivery's): scheduled when the retry policy
// would schedule that attempt's retry, with the attempts left, and
// attempts_before in its metadata so that its own retries follow on
// (processDeliveryWorker.NextRetry).
func retryFromBatch(inboxID int64, scheduledAt time.Time, before, maxAttempts int) river.InsertManyParams {
	p := fromBatch(inboxID, false)
	p.InsertOpts.ScheduledAt, p.InsertOpts.MaxAttempts = scheduledAt, maxAttempts-before
	p.InsertOpts.Metadata, _ = json.Marshal(batchRetryMeta{AttemptsBefore: before}) // an int: cannot fail
	return p
}

// batchRetryMeta is the metadata of retryFromBatch's job.
type batchRetryMeta struct {
	AttemptsBefore int `json:"attempts_before"`
}

// attemptsBefore is job's batchRetryMeta.AttemptsBefore, 0 for any other
// job.
func attemptsBefore(job *rivertype.JobRow) int {
	var meta batchRetryMeta
	if len(job.Metadata) == 0 || json.Unmarshal(job.Metadata, &meta) != nil {
		return 0
	}
	return meta.AttemptsBefore
}

func (ProcessDeliveriesArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueDeliveries}
}

// processDeliveriesWorker runs a process_deliveries job: its deliveries'
// handlers as a processing batch does (handleBatchTx), their outcomes and
// the job's completion in one transaction. A delivery the batch does not
// decide gets a process_delivery job of its own in that same transaction,
// so it is never left without one:
//   - one to process alone (its handlers do not batch, or its resource was
//     busy): available at once;
//   - one whose handler failed: its error recorded, a retry scheduled by
//     the retry policy as after the batch job's attempt, with the attempts
//     left (retryFromBatch); a permanent error, or a last attempt, fails
//     the delivery instead.
//
// Should the batch fail as a whole (a deadlock, a panic, the job's timeout,
// a shutdown), every delivery gets a process_delivery job of its own
// instead (split). So does a failed COMMIT unless the commit happened: then
// the job is completed, split writes nothing and nothing runs twice. Only
// when split fails too (the database unreachable) does the job fail, and
// River runs the group again; on its last attempt it is snoozed instead,
// since a discarded group would leave its deliveries with no job.
type processDeliveriesWorker struct {
	river.WorkerDefaults[ProcessDeliveriesArgs]
	w       *processDeliveryWorker // pool, registry, logger, observers, retry policy
	observe func(n int)            // ClientConfig.ObserveBatch
}

func newProcessDeliveriesWorker(w *processDeliveryWorker, cfg ClientConfig) *processDeliveriesWorker {
	return &processDeliveriesWorker{w: w, observe: cfg.ObserveBatch}
}

func (pw *processDeliveriesWorker) Work(ctx context.Context, job *river.Job[ProcessDeliveriesArgs]) error {
	start := time.Now()
	client := river.ClientFromContext[pgx.Tx](ctx)
	ids := slices.Compact(slices.Sorted(slices.Values(job.Args.InboxIDs)))
	g := &batchGroup{job: job, pw: pw, client: client, members: make([]*batchMember, len(ids))}
	for i, id := range ids {
		g.members[i] = &batchMember{ctx: ctx, inboxID: id, group: g, client: client}
	}
	// With the other deliveries River fetched beside it, in one
	// transaction; by itself if that batch did not commit and there is
	// time left.
	var err error
	if b := pw.w.batcher; b != nil {
		b.processGroup(ctx, g)
		if g.committed {
			pw.report(ctx, job, g.members, start)
			return nil
		}
		err = g.err
	}
	if err == nil {
		err = context.Cause(ctx) // no time left to run it alone
	}
	if err == nil {
		pw.observe(len(g.members))
		if err = pw.run(ctx, job, client, g.members); err == nil {
			pw.report(ctx, job, g.members, start)
			return nil
		}
	}
	if errors.Is(err, errJobTakenOver) {
		// The run River gave the job to decides its deliveries.
		pw.w.logger.Warn("processing batch not completed by this run", "job_id", job.ID, "error", err)
		return err
	}
	if errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely) {
		// An operator cancelled the job (River UI): its deliveries stay
		// received, as a cancelled process_delivery job leaves its one,
		// until they are replayed.
		pw.w.logger.Warn("processing batch cancelled; its deliveries stay received until replayed",
			"job_id", job.ID, "deliveries", len(ids), "error", err)
		return err
	}
	// Every other failure, the job's timeout and a shutdown included,
	// gives each delivery a job of its own: a retry of the whole group
	// would tie them together again, and a group that used its last
	// attempt would leave them with no job at all. After a failed COMMIT
	// that is safe too: if the commit happened, the job is completed and
	// split's completion finds it so and writes nothing.
	var commitErr *batchCommitError
	if errors.As(err, &commitErr) {
		pw.w.logger.Error("processing batch commit failed; its deliveries get jobs of their own unless it happened",
			"job_id", job.ID, "deliveries", len(ids), "error", err)
	} else {
		pw.w.logger.Warn("processing batch failed; each of its deliveries gets a job of its own",
			"job_id", job.ID, "deliveries", len(ids), "error", err)
	}
	serr := pw.split(ctx, job, client, ids)
	switch {
	case serr == nil:
		return nil
	case errors.Is(serr, errJobTakenOver):
		// The commit happened (River's completer then finds the job
		// completed and leaves it so), or River gave the job to another run.
		pw.w.logger.Info("processing batch committed or taken over by another run; nothing to split", "job_id", job.ID)
		return err
	case job.Attempt >= job.MaxAttempts:
		// A failed last attempt would be discarded, and its deliveries left
		// received with no job: snoozing keeps the attempt for later.
		pw.w.logger.Error("processing batch failed on its last attempt and could not hand its deliveries on; it runs again later",
			"job_id", job.ID, "deliveries", len(ids), "error", err, "split_error", serr, "in", splitRetryIn)
		return river.JobSnooze(splitRetryIn)
	}
	return fmt.Errorf("%w; splitting the batch: %w", err, serr)
}

// splitRetryIn is when a batch job that failed its last attempt, split
// included, runs again.
const splitRetryIn = time.Minute

// run processes members in one transaction with the job's completion.
func (pw *processDeliveriesWorker) run(ctx context.Context, job *river.Job[ProcessDeliveriesArgs], client *river.Client[pgx.Tx], members []*batchMember) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("processing batch panicked: %v", p)
		}
	}()
	tx, err := pw.w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	done, err := handleBatchTx(ctx, tx, pw.w.registry, pw.w.handOff, members)
	if err != nil {
		return err
	}
	if err := pw.followUpTx(ctx, tx, job, client, members); err != nil {
		return err
	}
	if err := pw.completeTx(ctx, tx, job, outcomesOf(done)); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return &batchCommitError{err}
	}
	return nil
}

// completeTx is completeTx for the job and its decided deliveries.
func (pw *processDeliveriesWorker) completeTx(ctx context.Context, tx pgx.Tx, job *river.Job[ProcessDeliveriesArgs], ps []processed) error {
	err := completeTx(ctx, tx, []jobAttempt{attemptOf(job)}, ps, time.Now())
	var taken *jobsTakenOverError
	if errors.As(err, &taken) {
		return fmt.Errorf("job %d attempt %d: %w", job.ID, job.Attempt, errJobTakenOver)
	}
	return err
}

// followUpTx gives every member the batch did not decide what it needs, in
// tx: a process_delivery job, or its failure recorded.
func (pw *processDeliveriesWorker) followUpTx(ctx context.Context, tx pgx.Tx, job *river.Job[ProcessDeliveriesArgs], client *river.Client[pgx.Tx], members []*batchMember) error {
	var params []river.InsertManyParams
	for _, m := range members {
		switch {
		case m.outcome != "":
		case m.alone:
			params = append(params, fromBatch(m.inboxID, false))
		case errors.Is(m.err, errInboxRowGone):
			// Retention deleted it: nothing left to process.
		case m.err != nil:
			final := failsDelivery(job, m.err)
			if err := pw.markErrorTx(ctx, tx, job, m, final); err != nil {
				return err
			}
			if !final {
				params = append(params, retryFromBatch(m.inboxID, pw.w.retry.NextRetry(job.JobRow), job.Attempt, job.MaxAttempts))
			}
		}
	}
	if len(params) == 0 {
		return nil
	}
	if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue deliveries the batch did not decide: %w", err)
	}
	return nil
}

// markErrorTx records m's failed attempt (inbox.MarkError), in tx: it
// commits with the retry's job, or as the delivery's failure.
func (pw *processDeliveriesWorker) markErrorTx(ctx context.Context, tx pgx.Tx, job *river.Job[ProcessDeliveriesArgs], m *batchMember, final bool) error {
	attemptStart := time.Now()
	if job.AttemptedAt != nil {
		attemptStart = *job.AttemptedAt
	}
	if err := inbox.MarkError(ctx, tx, inbox.FailedAttempt{
		InboxID: m.inboxID, Error: m.err.Error(), Final: final, StartedAt: attemptStart,
	}); err != nil {
		return fmt.Errorf("record delivery %d's error: %w", m.inboxID, err)
	}
	return nil
}

// failsDelivery says whether err, a handler's in job's batch, fails the
// delivery: a permanent error, or the batch job's last attempt.
func failsDelivery(job *river.Job[ProcessDeliveriesArgs], err error) bool {
	return handlers.IsPermanent(err) || job.Attempt >= job.MaxAttempts
}

// splitTimeout bounds split, which runs whatever the job's context says:
// it is what a job past its timeout, or stopped by a shutdown, still owes
// its deliveries. Under the 5 s past its timeout after which River logs a
// job as stuck.
const splitTimeout = 4 * time.Second

// split gives each of ids a process_delivery job of its own, to run
// alone, and completes the batch's job, in one transaction.
func (pw *processDeliveriesWorker) split(ctx context.Context, job *river.Job[ProcessDeliveriesArgs], client *river.Client[pgx.Tx], ids []int64) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), splitTimeout)
	defer cancel()
	return pgx.BeginFunc(ctx, pw.w.pool, func(tx pgx.Tx) error {
		params := make([]river.InsertManyParams, len(ids))
		for i, id := range ids {
			params[i] = fromBatch(id, true)
		}
		if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
			return fmt.Errorf("enqueue the batch's deliveries: %w", err)
		}
		return pw.completeTx(ctx, tx, job, nil)
	})
}

// report logs and observes the batch's committed deliveries as
// process_delivery jobs do theirs.
func (pw *processDeliveriesWorker) report(ctx context.Context, job *river.Job[ProcessDeliveriesArgs], members []*batchMember, start time.Time) {
	took := time.Since(start)
	for _, m := range members {
		d := m.d
		attrs := []slog.Attr{slog.Int64("inbox_id", m.inboxID), slog.String("source", d.Source),
			slog.String("delivery_id", d.DeliveryID), slog.String("event_type", d.EventType),
			slog.Int64("job_id", job.ID), slog.Int("attempt", job.Attempt)}
		switch {
		case m.outcome != "":
			if ok, held := pw.w.lines.Allow(time.Now()); ok {
				attrs = append(attrs, slog.String("duration", took.String()))
				if held > 0 {
					attrs = append(attrs, slog.Int("suppressed_since_last", held))
				}
				pw.w.logger.LogAttrs(ctx, slog.LevelInfo, "delivery "+string(m.outcome), attrs...)
			}
			pw.w.observe(d.EventType, string(m.outcome), took)
		case m.alone:
			// Its own job reports it.
		case errors.Is(m.err, errInboxRowGone):
			pw.w.logger.LogAttrs(ctx, slog.LevelWarn, "delivery not processed", append(attrs, slog.Any("error", m.err))...)
		case m.err != nil:
			if failsDelivery(job, m.err) {
				pw.w.logger.LogAttrs(ctx, slog.LevelError, "delivery failed",
					append(attrs, slog.Any("error", m.err), slog.Bool("permanent", handlers.IsPermanent(m.err)))...)
				pw.w.observe(d.EventType, "failed", took)
			} else {
				pw.w.logger.LogAttrs(ctx, slog.LevelWarn, "delivery failed; it is retried in a job of its own", append(attrs, slog.Any("error", m.err))...)
				pw.w.observe(d.EventType, "retry", took)
			}
		}
	}
}
