package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/loglimit"
)

// queueDeliveries is the queue inbox processing runs on.
const queueDeliveries = "deliveries"

// ProcessDeliveryArgs asks a worker to run the handlers for one inbox row.
// Ingest enqueues it in the transaction that inserts the row; a replay
// enqueues another.
type ProcessDeliveryArgs struct {
	InboxID int64 `json:"inbox_id"`
	// Alone processes the delivery in a transaction of its own, never in a
	// processing batch: a process_deliveries job whose batch failed as a
	// whole (its timeout, say) sets it, so that what failed the batch
	// cannot fail the delivery's neighbours again.
	Alone bool `json:"alone,omitempty"`
}

func (ProcessDeliveryArgs) Kind() string { return "process_delivery" }

func (ProcessDeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueDeliveries}
}

// processDeliveryWorker runs a delivery's handlers. Their writes, the inbox
// row's new status and the job's completion commit in one transaction.
type processDeliveryWorker struct {
	river.WorkerDefaults[ProcessDeliveryArgs]
	pool     *pgxpool.Pool
	registry *handlers.Registry
	logger   *slog.Logger
	observe  func(eventType, outcome string, d time.Duration)
	batcher  *processBatcher     // nil: each delivery in a transaction of its own
	handOff  *inbox.HandOff      // what ingest stored in this process: ClientConfig.HandOff
	gate     *resourceGate       // the deliveries processed alone, waiting for a resource
	lines    *loglimit.PerSecond // the processed deliveries' info lines
	retry    river.ClientRetryPolicy
}

func newProcessDeliveryWorker(pool *pgxpool.Pool, cfg ClientConfig) *processDeliveryWorker {
	w := &processDeliveryWorker{pool: pool, registry: cfg.Registry, logger: cfg.Logger, observe: cfg.ObserveDelivery, handOff: cfg.HandOff,
		lines: loglimit.ForLogger(cfg.Logger, cfg.LogDeliveriesPerSecond), retry: cfg.RetryPolicy, gate: newResourceGate()}
	if w.retry == nil {
		w.retry = &river.DefaultClientRetryPolicy{}
	}
	if cfg.BatchSize > 1 {
		w.batcher = newProcessBatcher(w, cfg.BatchSize, cfg.BatchWindow.Std(), cfg.Timeout.Std(), processBatchSlots, cfg.ObserveBatch)
	}
	return w
}

// processBatchSlots is how many processing batches may be in their
// transaction at once per process: enough to keep both the database and
// the handlers busy while a batch commits, few enough that the pool keeps
// connections for everything else.
const processBatchSlots = 4

var errInboxRowGone = errors.New("inbox row not found (deleted by retention?)")

func (w *processDeliveryWorker) Work(ctx context.Context, job *river.Job[ProcessDeliveryArgs]) error {
	start := time.Now()
	var (
		d       handlers.Delivery
		outcome handlers.Outcome
		alone   = true
		err     error
	)
	// A retry runs alone: if a neighbour failed its batch (ran out of the
	// batch's time, say), batching it with that neighbour again would fail
	// it again, attempt after attempt.
	if w.batcher != nil && !job.Args.Alone && job.Attempt <= 1 {
		d, outcome, alone, err = w.batcher.process(ctx, job)
	}
	if alone {
		d, outcome, err = w.process(ctx, job)
	}
	// A line per delivery: LogAttrs, because a child logger (With) per
	// job showed in a worker's CPU profile (bench/README.md, Design
	// decisions, "Delivery log lines").
	attrs := [...]slog.Attr{slog.Int64("inbox_id", job.Args.InboxID), slog.String("source", d.Source),
		slog.String("delivery_id", d.DeliveryID), slog.String("event_type", d.EventType),
		slog.Int64("job_id", job.ID), slog.Int("attempt", job.Attempt)}
	log := func(level slog.Level, msg string, more ...slog.Attr) {
		w.logger.LogAttrs(ctx, level, msg, append(attrs[:], more...)...)
	}
	if err == nil {
		// Unless this second's lines are used up (LogDeliveriesPerSecond).
		if ok, held := w.lines.Allow(time.Now()); ok {
			more := []slog.Attr{slog.String("duration", time.Since(start).String())}
			if held > 0 {
				more = append(more, slog.Int("suppressed_since_last", held))
			}
			log(slog.LevelInfo, "delivery "+string(outcome), more...)
		}
		w.observe(d.EventType, string(outcome), time.Since(start))
		return nil
	}
	if errors.Is(err, errInboxRowGone) {
		log(slog.LevelWarn, "delivery not processed", slog.Any("error", err))
		return river.JobCancel(err)
	}
	if errors.Is(err, errJobTakenOver) {
		// The run River gave the job to decides the delivery and its row.
		log(slog.LevelWarn, "delivery not processed by this run", slog.Any("error", err))
		return err
	}

	permanent := handlers.IsPermanent(err)
	final := permanent || job.Attempt >= job.MaxAttempts
	// Outside the failed transaction, so the reason survives the rollback.
	attemptStart := start
	if job.AttemptedAt != nil {
		attemptStart = *job.AttemptedAt
	}
	if merr := inbox.MarkError(context.WithoutCancel(ctx), w.pool, inbox.FailedAttempt{
		InboxID: job.Args.InboxID, Error: err.Error(), Final: final, StartedAt: attemptStart,
	}); merr != nil {
		log(slog.LevelError, "could not record the delivery's error", slog.Any("error", merr))
	}
	if final {
		log(slog.LevelError, "delivery failed", slog.Any("error", err), slog.Bool("permanent", permanent))
		w.observe(d.EventType, "failed", time.Since(start))
	} else {
		log(slog.LevelWarn, "delivery failed; River will retry", slog.Any("error", err))
		w.observe(d.EventType, "retry", time.Since(start))
	}
	if permanent {
		return river.JobCancel(err)
	}
	return err
}

// NextRetry schedules a retry of a job a batch job gave a failed delivery
// (retryFromBatch) as the delivery's next attempt after the batch job's:
// River's retry policies go by the job's own errors, and would start the
// backoff over. Other jobs get the client's policy (the zero time).
func (w *processDeliveryWorker) NextRetry(job *river.Job[ProcessDeliveryArgs]) time.Time {
	before := attemptsBefore(job.JobRow)
	if before == 0 {
		return time.Time{}
	}
	row := *job.JobRow
	row.Attempt += before
	row.Errors = append(make([]rivertype.AttemptError, before, before+len(job.Errors)), job.Errors...)
	return w.retry.NextRetry(&row)
}

// process runs one delivery in a transaction of its own. It first tries
// without waiting for the delivery's resource; if another transaction
// holds it, it waits its turn at the gate, without a connection, and then
// in the database, the only worker of this process to wait there for that
// resource.
func (w *processDeliveryWorker) process(ctx context.Context, job *river.Job[ProcessDeliveryArgs]) (handlers.Delivery, handlers.Outcome, error) {
	d, outcome, err := w.processTx(ctx, job, w.registry.TryProcess)
	var busy *handlers.ResourceBusyError
	if !errors.As(err, &busy) {
		return d, outcome, err
	}
	release, err := w.gate.enter(ctx, busy.LockKey)
	if err != nil {
		// The inbox row's last error says what the job was waiting for.
		return d, outcome, fmt.Errorf("wait for the resource another delivery holds (%q): %w", busy.LockKey, err)
	}
	defer release()
	return w.processTx(ctx, job, w.registry.Process)
}

// processTx runs one delivery in a transaction of its own with process
// (Registry.Process or Registry.TryProcess).
func (w *processDeliveryWorker) processTx(ctx context.Context, job *river.Job[ProcessDeliveryArgs], process processFunc) (handlers.Delivery, handlers.Outcome, error) {
	var (
		d       handlers.Delivery
		outcome handlers.Outcome
	)
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		var err error
		d, err = scanDelivery(inbox.Load(ctx, tx, job.Args.InboxID))
		w.handOff.Forget(job.Args.InboxID) // read from its row here
		if errors.Is(err, pgx.ErrNoRows) {
			return errInboxRowGone
		}
		if err != nil {
			return fmt.Errorf("load inbox row: %w", err)
		}
		d.Provider = w.registry.Provider(d.Source)

		res, err := process(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), d)
		if err != nil {
			return err
		}
		outcome = res.Outcome
		resourceKey, stale := resourceFacts(res)
		err = completeTx(ctx, tx, []jobAttempt{attemptOf(job)},
			[]processed{{inboxID: d.InboxID, outcome: outcome, resourceKey: resourceKey, stale: stale}}, time.Now())
		var taken *jobsTakenOverError
		if errors.As(err, &taken) {
			return fmt.Errorf("job %d attempt %d: %w", job.ID, job.Attempt, errJobTakenOver)
		}
		return err
	})
	return d, outcome, err
}

type processFunc func(context.Context, pgx.Tx, handlers.JobInserter, handlers.Delivery) (handlers.Result, error)

// resourceFacts is what the inbox row records of a delivery's resource:
// its key and whether it was stale, both null when it names none.
func resourceFacts(res handlers.Result) (*string, *bool) {
	if res.Resource.Key == "" {
		return nil, nil
	}
	key, stale := res.Resource.Key, res.Stale
	return &key, &stale
}

// scanDelivery reads a row of inbox.Load or inbox.LoadMany.
func scanDelivery(row pgx.Row) (handlers.Delivery, error) {
	var (
		d          handlers.Delivery
		occurredAt *time.Time
		headers    http.Header
	)
	if err := row.Scan(&d.InboxID, &d.Source, &d.DeliveryID, &d.EventType, &occurredAt, &d.ReceivedAt, &headers, &d.Payload); err != nil {
		return d, err
	}
	if occurredAt != nil {
		d.OccurredAt = *occurredAt
	}
	d.Headers = canonicalHeaders(headers)
	return d, nil
}
