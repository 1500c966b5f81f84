package stripe

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
)

var (
	//go:embed sql/ledger_insert.sql
	ledgerInsertSQL string
	//go:embed sql/payment_saga_insert.sql
	paymentSagaInsertSQL string
	//go:embed sql/payment_saga_advance.sql
	paymentSagaAdvanceSQL string
)

// SagaHandlerName is the payment saga's registration name; it is part of
// its derived keys, so it never changes.
const SagaHandlerName = "stripe.payment_saga"

// SagaConfig configures the payment saga.
type SagaConfig struct {
	// FulfillmentURL receives POST {"payment_intent","amount","currency"}.
	// Required.
	FulfillmentURL string
	// PaymentsURL is the payments API base; refunds are POSTed to
	// {PaymentsURL}/v1/refunds {"payment_intent"}. Required.
	PaymentsURL string
	// Pool is where the saga's follow-up jobs commit their effects. Required.
	Pool *pgxpool.Pool
	// Client makes the downstream calls. Defaults to a client with a
	// handlers.DefaultDownstreamTimeout timeout.
	Client *http.Client
	// FinalStatuses are the 4xx statuses with which the fulfillment or
	// payments API refuses a request for good: a refused fulfillment is
	// compensated with a refund, a refused refund fails the saga. 409 and
	// 429 are never final (see handlers.CheckFinalStatuses). Defaults to
	// handlers.DefaultFinalStatuses (422).
	FinalStatuses []int
	// SweepEvery is how often the sweep marks failed the sagas whose step's
	// job ended without its worker deciding them (its process died on the
	// last attempt, or an operator cancelled it). Defaults to
	// defaultSagaSweepEvery.
	SweepEvery time.Duration
	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

// RegisterSaga registers the payment saga for every stripe source:
//
//  1. on payment_intent.succeeded, in the handler's transaction: book a
//     ledger credit, unique on (payment_intent, 'credit'), and enqueue the
//     fulfillment step once;
//  2. the fulfillment job POSTs to FulfillmentURL with Key("fulfill"); 5xx,
//     timeouts and connection errors retry with the same key, and 409 (our
//     own earlier request with that key still in progress), 429 and 503
//     wait for their Retry-After;
//  3. a 422 (or another of FinalStatuses) is a final refusal: the
//     compensation, a refund job, is enqueued once (handler_step plus a
//     River unique job) in the same transaction that completes the
//     fulfillment job, and only if that transaction moves the saga from
//     fulfilling to refunding;
//  4. the refund job POSTs {PaymentsURL}/v1/refunds with Key("refund"),
//     retrying with the same key, and on success books a ledger debit
//     unique on (payment_intent, 'refund') of what charge.refunded has not
//     debited yet (bookRefund).
//
// When River will not run a step's job again, the saga is marked failed
// at that step: by the step's worker, or by the sweep when no worker
// decided the job's end. A replay of the delivery finds the credit booked
// and enqueues nothing, so it causes no second fulfillment and no second
// refund, except for a failed saga: the replay resumes its step with the
// same key (resume).
func RegisterSaga(r *handlers.Registry, cfg SagaConfig) error {
	if cfg.FulfillmentURL == "" || cfg.PaymentsURL == "" || cfg.Pool == nil {
		return errors.New("stripe: the payment saga needs FulfillmentURL, PaymentsURL and Pool")
	}
	if err := handlers.CheckFinalStatuses(cfg.FinalStatuses); err != nil {
		return fmt.Errorf("stripe: the payment saga's FinalStatuses: %w", err)
	}
	if cfg.FinalStatuses == nil {
		cfg.FinalStatuses = handlers.DefaultFinalStatuses
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = defaultSagaSweepEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &saga{cfg: cfg}
	handlers.AddWorker(r, &fulfillWorker{saga: s})
	handlers.AddWorker(r, &refundWorker{saga: s})
	handlers.AddWorker(r, &sagaSweepWorker{saga: s})
	r.AddPeriodicJob(sagaSweepJob(cfg.SweepEvery))
	return r.Register(handlers.Registration{
		Name:     SagaHandlerName,
		Provider: "stripe",
		Events:   []string{"payment_intent.succeeded"},
		Batch:    true,                // database work only: the call out runs in a follow-up job
		Ordering: handlers.EveryEvent, // every success is money received, whatever its order
		Handler:  handlers.HandlerFunc(s.handle),
	})
}

type saga struct{ cfg SagaConfig }

// sagaPayment is the part of a payment_intent event the saga uses.
type sagaPayment struct {
	Source        string `json:"source"`
	DeliveryID    string `json:"delivery_id"`
	InboxID       int64  `json:"inbox_id"`
	PaymentIntent string `json:"payment_intent"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
}

func (s *saga) handle(ctx context.Context, e *handlers.Event) error {
	var evt struct {
		Data struct {
			Object struct {
				ID       string `json:"id"`
				Amount   int64  `json:"amount"`
				Currency string `json:"currency"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &evt); err != nil || !strings.HasPrefix(evt.Data.Object.ID, "pi_") {
		return handlers.Permanent(fmt.Errorf("payment_intent.succeeded without a payment intent id in data.object.id"))
	}
	p := sagaPayment{
		Source: e.Source, DeliveryID: e.DeliveryID, InboxID: e.InboxID,
		PaymentIntent: evt.Data.Object.ID, Amount: evt.Data.Object.Amount, Currency: evt.Data.Object.Currency,
	}
	credited, err := bookLedger(ctx, e.Tx, p, "credit", "", p.Amount)
	if err != nil {
		return err
	}
	if !credited {
		resumed, err := s.resume(ctx, e, p.PaymentIntent)
		if err == nil && !resumed {
			e.Logger.Info("saga: payment already credited; nothing to do", "step", "credit", "payment_intent", p.PaymentIntent)
		}
		return err
	}
	fulfillKey, refundKey := e.Key("fulfill"), e.Key("refund")
	if _, err := e.Tx.Exec(ctx, paymentSagaInsertSQL, pgx.NamedArgs{
		"payment_intent": p.PaymentIntent, "source": p.Source, "delivery_id": p.DeliveryID,
		"amount": p.Amount, "currency": p.Currency, "fulfill_key": fulfillKey, "refund_key": refundKey,
	}); err != nil {
		return fmt.Errorf("start saga: %w", err)
	}
	if _, err := e.EnqueueOnce(ctx, "fulfill", fulfillArgs{sagaPayment: p, Key: fulfillKey, RefundKey: refundKey}, nil); err != nil {
		return err
	}
	e.Logger.Info("saga: payment credited, fulfillment enqueued", "step", "credit", "payment_intent", p.PaymentIntent, "next_key", fulfillKey)
	return nil
}

// bookLedger inserts a ledger entry unless its natural key exists, and
// reports whether it did.
func bookLedger(ctx context.Context, tx pgx.Tx, p sagaPayment, kind, reference string, amount int64) (bool, error) {
	var id int64
	err := tx.QueryRow(ctx, ledgerInsertSQL, pgx.NamedArgs{
		"payment_intent": p.PaymentIntent, "kind": kind, "reference": reference, "amount": amount,
		"currency": p.Currency, "source": p.Source, "delivery_id": p.DeliveryID,
	}).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("book ledger %s: %w", kind, err)
	}
	return true, nil
}

// advance moves the saga's state, in tx, only from one of from, and
// reports whether it did. A step that finds the saga elsewhere (a re-run
// after the saga moved on) must do nothing more.
func advance(ctx context.Context, tx pgx.Tx, paymentIntent, to string, lastErr error, from ...string) (bool, error) {
	var msg *string
	if lastErr != nil {
		m := lastErr.Error()
		msg = &m
	}
	tag, err := tx.Exec(ctx, paymentSagaAdvanceSQL, pgx.NamedArgs{
		"payment_intent": paymentIntent, "to_state": to, "last_error": msg, "from_states": from,
	})
	if err != nil {
		return false, fmt.Errorf("saga %s → %s: %w", paymentIntent, to, err)
	}
	return tag.RowsAffected() == 1, nil
}

// notMoved logs a step that found the saga in another state than it
// expected, and so changed nothing.
func notMoved(log *slog.Logger, to string, from ...string) {
	log.Warn("saga: not moved; it is no longer in the state this step expects", "expected", from, "to", to)
}

// fulfillArgs asks for a payment's fulfillment. Key is unique: River will
// not hold two fulfillment jobs for one delivery.
type fulfillArgs struct {
	sagaPayment
	Key       string `json:"key" river:"unique"`
	RefundKey string `json:"refund_key"`
}

func (fulfillArgs) Kind() string { return "stripe_fulfill" }
func (fulfillArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: handlers.QueueDownstream, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type fulfillWorker struct {
	river.WorkerDefaults[fulfillArgs]
	saga *saga
}

func (w *fulfillWorker) Work(ctx context.Context, job *river.Job[fulfillArgs]) error {
	a, cfg := job.Args, w.saga.cfg
	body, _ := json.Marshal(map[string]any{"payment_intent": a.PaymentIntent, "amount": a.Amount, "currency": a.Currency})
	status, err := handlers.Call{URL: cfg.FulfillmentURL, Key: a.Key, Body: body, FinalStatuses: cfg.FinalStatuses}.Post(ctx, cfg.Client)
	log := cfg.Logger.With("source", a.Source, "delivery_id", a.DeliveryID, "inbox_id", a.InboxID,
		"step", "fulfill", "idempotency_key", a.Key, "payment_intent", a.PaymentIntent, "attempt", job.Attempt, "status", status)

	var refused *handlers.RefusedError
	switch {
	case err == nil:
		log.Info("saga: fulfillment accepted")
		return completeWith(ctx, cfg.Pool, job, func(tx pgx.Tx) error {
			moved, err := advance(ctx, tx, a.PaymentIntent, "fulfilled", nil, "fulfilling")
			if err == nil && !moved {
				notMoved(log, "fulfilled", "fulfilling")
			}
			return err
		})
	case errors.As(err, &refused):
		log.Warn("saga: fulfillment refused; compensating with a refund", "error", err, "refund_key", a.RefundKey)
		return completeWith(ctx, cfg.Pool, job, func(tx pgx.Tx) error {
			moved, err := advance(ctx, tx, a.PaymentIntent, "refunding", err, "fulfilling")
			if err != nil || !moved {
				if err == nil {
					notMoved(log, "refunding", "fulfilling")
				}
				return err
			}
			_, err = handlers.EnqueueOnceTx(ctx, tx, river.ClientFromContext[pgx.Tx](ctx), handlers.Step{
				Key: a.RefundKey, Source: a.Source, DeliveryID: a.DeliveryID, Handler: SagaHandlerName, Name: "refund",
			}, refundArgs{sagaPayment: a.sagaPayment, Key: a.RefundKey}, nil)
			return err
		})
	default:
		return w.saga.failOrRetry(ctx, job.JobRow, log, a.PaymentIntent, err, "fulfilling")
	}
}

// refundArgs asks for a payment's refund: the saga's compensation. Key is
// unique across every job state, so the compensation is enqueued at most
// once even if the fulfillment job were run again.
type refundArgs struct {
	sagaPayment
	Key string `json:"key" river:"unique"`
}

func (refundArgs) Kind() string { return "stripe_refund" }
func (refundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: handlers.QueueDownstream, UniqueOpts: river.UniqueOpts{
		ByArgs:  true,
		ByState: append(rivertype.UniqueOptsByStateDefault(), rivertype.JobStateCancelled, rivertype.JobStateDiscarded),
	}}
}

type refundWorker struct {
	river.WorkerDefaults[refundArgs]
	saga *saga
}

func (w *refundWorker) Work(ctx context.Context, job *river.Job[refundArgs]) error {
	a, cfg := job.Args, w.saga.cfg
	body, _ := json.Marshal(map[string]any{"payment_intent": a.PaymentIntent})
	url := strings.TrimSuffix(cfg.PaymentsURL, "/") + "/v1/refunds"
	status, err := handlers.Call{URL: url, Key: a.Key, Body: body, FinalStatuses: cfg.FinalStatuses}.Post(ctx, cfg.Client)
	log := cfg.Logger.With("source", a.Source, "delivery_id", a.DeliveryID, "inbox_id", a.InboxID,
		"step", "refund", "idempotency_key", a.Key, "payment_intent", a.PaymentIntent, "attempt", job.Attempt, "status", status)
	if err == nil {
		log.Info("saga: refund accepted; booking the debit")
		return completeWith(ctx, cfg.Pool, job, func(tx pgx.Tx) error {
			// The refund is of the whole payment: debit what the
			// provider's charge.refunded events have not debited yet.
			if err := handlers.LockTx(ctx, tx, ledgerLockKey(a.PaymentIntent)); err != nil {
				return err
			}
			booked, err := readRefunds(ctx, tx, a.PaymentIntent, "")
			if err != nil {
				return err
			}
			if _, err := bookRefund(ctx, tx, a.sagaPayment, "refund", "", a.Amount, booked); err != nil {
				return err
			}
			moved, err := advance(ctx, tx, a.PaymentIntent, "refunded", nil, "refunding")
			if err == nil && !moved {
				notMoved(log, "refunded", "refunding")
			}
			return err
		})
	}
	return w.saga.failOrRetry(ctx, job.JobRow, log, a.PaymentIntent, err, "refunding")
}

// failOrRetry returns what River should do with a step's job after err.
// When River will not run the job again (cancelled, or failed on its last
// attempt), it first marks the saga failed at the step it was waiting on,
// so that the saga never waits on a job that will not come back. A replay
// of the delivery resumes it (resume).
func (s *saga) failOrRetry(ctx context.Context, job *rivertype.JobRow, log *slog.Logger, paymentIntent string, err error, waiting string) error {
	result := handlers.JobResult(job, err)
	if !handlers.GivesUp(job, result) {
		log.Warn("saga: step failed; retrying with the same key", "error", err)
		return result
	}
	log.Error("saga: step failed for good; the saga is failed until its delivery is replayed", "error", err)
	// Detached: a job cancelled while running has its context cancelled.
	dctx := context.WithoutCancel(ctx)
	ferr := pgx.BeginFunc(dctx, s.cfg.Pool, func(tx pgx.Tx) error {
		_, err := advance(dctx, tx, paymentIntent, "failed", err, waiting)
		return err
	})
	if ferr != nil {
		log.Error("saga: could not mark the saga failed; the sweep will", "error", ferr)
	}
	return result
}

// completeWith runs effects and completes job in one transaction: the
// effects exist exactly when the job is done.
func completeWith[T river.JobArgs](ctx context.Context, pool *pgxpool.Pool, job *river.Job[T], effects func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := effects(tx); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}
