package handlers

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/ledger_charge_refunded_so_far.sql
var ledgerChargeRefundedSoFarSQL string

// RegisterStripeLedger books ledger entries for charge.refunded and
// payment_intent.payment_failed, each idempotent on a natural key.
func RegisterStripeLedger(r *Registry) error {
	if err := r.Register(Registration{
		Name:     "stripe.ledger.charge_refunded",
		Provider: "stripe",
		Events:   []string{"charge.refunded"},
		// The event carries the charge's cumulative amount_refunded: the
		// newest event says everything an older one would.
		Batch:    true, // database work only
		Ordering: LatestState,
		Handler:  HandlerFunc(chargeRefunded),
	}); err != nil {
		return err
	}
	return r.Register(Registration{
		Name:     "stripe.ledger.payment_failed",
		Provider: "stripe",
		Events:   []string{"payment_intent.payment_failed"},
		Batch:    true,       // database work only
		Ordering: EveryEvent, // each failed attempt is its own fact
		Handler:  HandlerFunc(paymentFailed),
	})
}

// chargeRefunded books what was refunded since the last booking for the
// charge. The natural key is (payment_intent, charge id + cumulative
// amount): the same refund state described twice books once.
func chargeRefunded(ctx context.Context, e *Event) error {
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
		return Permanent(fmt.Errorf("charge.refunded without a charge in data.object"))
	}
	ch := evt.Data.Object
	owner := ch.PaymentIntent
	if owner == "" {
		owner = ch.ID // a charge made without a payment intent
	}
	var soFar int64
	if err := e.Tx.QueryRow(ctx, ledgerChargeRefundedSoFarSQL, pgx.NamedArgs{"payment_intent": owner, "charge": ch.ID}).Scan(&soFar); err != nil {
		return fmt.Errorf("read booked refunds: %w", err)
	}
	if ch.AmountRefunded <= soFar {
		return nil // already booked
	}
	p := sagaPayment{Source: e.Source, DeliveryID: e.DeliveryID, PaymentIntent: owner, Currency: ch.Currency}
	_, err := bookLedger(ctx, e.Tx, p, "charge_refunded", ch.ID+":"+strconv.FormatInt(ch.AmountRefunded, 10), -(ch.AmountRefunded - soFar))
	return err
}

// paymentFailed records a failed payment attempt; the event id is the
// natural key of one attempt.
func paymentFailed(ctx context.Context, e *Event) error {
	var evt struct {
		Data struct {
			Object struct {
				ID       string `json:"id"`
				Currency string `json:"currency"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &evt); err != nil || evt.Data.Object.ID == "" {
		return Permanent(fmt.Errorf("payment_intent.payment_failed without a payment intent in data.object"))
	}
	p := sagaPayment{Source: e.Source, DeliveryID: e.DeliveryID, PaymentIntent: evt.Data.Object.ID, Currency: evt.Data.Object.Currency}
	_, err := bookLedger(ctx, e.Tx, p, "payment_failed", e.DeliveryID, 0)
	return err
}
