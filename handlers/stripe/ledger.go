package stripe

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/handlers"
)

//go:embed sql/ledger_refunds.sql
var ledgerRefundsSQL string

// RegisterLedger books ledger entries for charge.refunded and
// payment_intent.payment_failed, each idempotent on a natural key.
func RegisterLedger(r *handlers.Registry) error {
	if err := r.Register(handlers.Registration{
		Name:     "stripe.ledger.charge_refunded",
		Provider: "stripe",
		Events:   []string{"charge.refunded"},
		// The event carries the charge's cumulative amount_refunded: the
		// newest event says everything an older one would.
		Batch:    true, // database work only
		Ordering: handlers.LatestState,
		Handler:  handlers.HandlerFunc(chargeRefunded),
	}); err != nil {
		return err
	}
	return r.Register(handlers.Registration{
		Name:     "stripe.ledger.payment_failed",
		Provider: "stripe",
		Events:   []string{"payment_intent.payment_failed"},
		Batch:    true,                // database work only
		Ordering: handlers.EveryEvent, // each failed attempt is its own fact
		Handler:  handlers.HandlerFunc(paymentFailed),
	})
}

// chargeRefunded books what was refunded since the last booking for the
// charge. The natural key is (payment_intent, charge id + cumulative
// amount): the same refund state described twice books once. What the
// saga's refund already debited for the payment intent is not debited
// again (see bookRefund).
func chargeRefunded(ctx context.Context, e *handlers.Event) error {
	var evt struct {
		Data struct {
			Object struct {
				ID             string `json:"id"`
				PaymentIntent  string `json:"payment_intent"`
				AmountRefunded int64  `json:"amount_refunded"`
				Currency       string `json:"currency"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &evt); err != nil || evt.Data.Object.ID == "" {
		return handlers.Permanent(fmt.Errorf("charge.refunded without a charge in data.object"))
	}
	ch := evt.Data.Object
	owner := ch.PaymentIntent
	if owner == "" {
		owner = ch.ID // a charge made without a payment intent
	}
	if err := e.Lock(ctx, ledgerLockKey(owner)); err != nil {
		return err
	}
	booked, err := readRefunds(ctx, e.Tx, owner, ch.ID)
	if err != nil {
		return err
	}
	if ch.AmountRefunded <= booked.charge {
		return nil // already booked
	}
	p := sagaPayment{Source: e.Source, DeliveryID: e.DeliveryID, PaymentIntent: owner, Currency: ch.Currency}
	_, err = bookRefund(ctx, e.Tx, p, "charge_refunded", ch.ID+":"+strconv.FormatInt(ch.AmountRefunded, 10),
		booked.otherCharges+ch.AmountRefunded, booked)
	return err
}

// ledgerLockKey names the advisory lock on a payment intent's refund
// bookings. The saga's refund job and the charge.refunded handler book the
// same money in different transactions; each takes this lock before it
// reads what the other booked, so one of them debits it.
func ledgerLockKey(paymentIntent string) string { return "ledger:" + paymentIntent }

// refundsBooked is what a payment intent's ledger says about its refunds.
type refundsBooked struct {
	debited      int64 // debited in all by refunds of either path, as a positive amount
	charge       int64 // the newest cumulative refunded amount booked for the charge asked about
	otherCharges int64 // the same, summed over the payment intent's other charges
}

// readRefunds reads what is booked for paymentIntent's refunds; call it
// under the ledger lock, so the answer holds until commit.
func readRefunds(ctx context.Context, tx pgx.Tx, paymentIntent, charge string) (refundsBooked, error) {
	var r refundsBooked
	err := tx.QueryRow(ctx, ledgerRefundsSQL, pgx.NamedArgs{"payment_intent": paymentIntent, "charge": charge}).
		Scan(&r.debited, &r.charge, &r.otherCharges)
	if err != nil {
		return r, fmt.Errorf("read booked refunds: %w", err)
	}
	return r, nil
}

// bookRefund books an entry on (kind, reference) debiting what refunded,
// the payment intent's total refunded amount as this path knows it,
// exceeds what is already debited: nothing when the other path saw the
// same refund first. The entry is booked even at zero, a record that this
// path saw the refund.
func bookRefund(ctx context.Context, tx pgx.Tx, p sagaPayment, kind, reference string, refunded int64, booked refundsBooked) (bool, error) {
	return bookLedger(ctx, tx, p, kind, reference, -max(refunded-booked.debited, 0))
}

// paymentFailed records a failed payment attempt; the event id is the
// natural key of one attempt.
func paymentFailed(ctx context.Context, e *handlers.Event) error {
	var evt struct {
		Data struct {
			Object struct {
				ID       string `json:"id"`
				Currency string `json:"currency"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &evt); err != nil || evt.Data.Object.ID == "" {
		return handlers.Permanent(fmt.Errorf("payment_intent.payment_failed without a payment intent in data.object"))
	}
	p := sagaPayment{Source: e.Source, DeliveryID: e.DeliveryID, PaymentIntent: evt.Data.Object.ID, Currency: evt.Data.Object.Currency}
	_, err := bookLedger(ctx, e.Tx, p, "payment_failed", e.DeliveryID, 0)
	return err
}
