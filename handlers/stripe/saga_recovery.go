package stripe

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

var (
	//go:embed sql/payment_saga_resume.sql
	paymentSagaResumeSQL string
)

// defaultSagaSweepEvery is how often the saga's sweep looks for sagas
// whose step's job ended without its worker deciding them.
const defaultSagaSweepEvery = time.Minute

// resume moves a saga that failed at a step back to waiting on it and
// runs that step's job again, with the same derived key. It is how an
// operator retries a failed step: by replaying the delivery. It reports
// whether it resumed; a saga that is not failed is left alone.
func (s *saga) resume(ctx context.Context, e *handlers.Event, paymentIntent string) (bool, error) {
	var (
		step       string
		p          = sagaPayment{PaymentIntent: paymentIntent}
		fulfillKey string
		refundKey  string
	)
	err := e.Tx.QueryRow(ctx, paymentSagaResumeSQL, pgx.NamedArgs{"payment_intent": paymentIntent}).
		Scan(&step, &p.Source, &p.DeliveryID, &p.Amount, &p.Currency, &fulfillKey, &refundKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // not failed, or another replay resumed it first
	}
	if err != nil {
		return false, fmt.Errorf("resume saga: %w", err)
	}
	if p.Source == e.Source && p.DeliveryID == e.DeliveryID {
		p.InboxID = e.InboxID
	}
	rec := handlers.Step{Source: p.Source, DeliveryID: p.DeliveryID, Handler: SagaHandlerName, Name: step}
	var args river.JobArgs = fulfillArgs{sagaPayment: p, Key: fulfillKey, RefundKey: refundKey}
	rec.Key = fulfillKey
	if step == "refund" {
		args, rec.Key = refundArgs{sagaPayment: p, Key: refundKey}, refundKey
	}
	if err := e.RerunStep(ctx, rec, args); err != nil {
		return false, err
	}
	e.Logger.Info("saga: failed step resumed with the same key", "step", step, "payment_intent", paymentIntent, "idempotency_key", rec.Key)
	return true, nil
}

// sagaSweepArgs asks for one pass of the saga's sweep.
type sagaSweepArgs struct{}

func (sagaSweepArgs) Kind() string { return "stripe_saga_sweep" }

// sagaSweepJob runs the sweep every period (River's leader enqueues it:
// one runner cluster-wide), and once at start.
func sagaSweepJob(every time.Duration) *river.PeriodicJob {
	// Not unique: a pass is one UPDATE, and two passes at once each skip
	// the rows the other holds.
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		return sagaSweepArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

// sagaSweepWorker marks failed the sagas whose step's job ended without
// its worker deciding them (riverdb.FailStalledSagas).
type sagaSweepWorker struct {
	river.WorkerDefaults[sagaSweepArgs]
	saga *saga
}

func (w *sagaSweepWorker) Work(ctx context.Context, job *river.Job[sagaSweepArgs]) error {
	rows, err := riverdb.FailStalledSagas(ctx, w.saga.cfg.Pool)
	if err != nil {
		return fmt.Errorf("saga sweep: %w", err)
	}
	var paymentIntent, source, deliveryID, step, lastErr string
	_, err = pgx.ForEachRow(rows, []any{&paymentIntent, &source, &deliveryID, &step, &lastErr}, func() error {
		w.saga.cfg.Logger.Error("saga: its step's job ended; marked failed until its delivery is replayed",
			"source", source, "delivery_id", deliveryID, "payment_intent", paymentIntent, "step", step, "last_error", lastErr)
		return nil
	})
	if err != nil {
		return fmt.Errorf("saga sweep: %w", err)
	}
	return nil
}
