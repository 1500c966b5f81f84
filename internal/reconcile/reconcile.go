// Package reconcile recovers Stripe events whose webhooks never reached
// hookinbox. Stripe retries a failed webhook for 3 days and then gives up,
// but its Events API lists every event of the last 30 days and can filter
// those not yet delivered. Each one missing from the inbox is recorded
// through ingest, with its processing job, exactly as a received webhook.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/ingest"
)

// Recorder is what Reconcile stores events with; *ingest.Inbox satisfies it.
type Recorder interface {
	Record(ctx context.Context, d ingest.Delivery) (ingest.Recorded, error)
}

// Result counts what one pass saw and did.
type Result struct {
	Examined       int `json:"examined"`         // undelivered events listed since `since`
	AlreadyInInbox int `json:"already_in_inbox"` // in the inbox before the pass; left untouched
	Recovered      int `json:"recovered"`        // newly inserted with their job
}

// Reconcile lists the events Stripe has not delivered to every endpoint,
// created at or after since (zero: the 30 days Stripe keeps), and records
// each one that is not yet in the inbox under cfg.Source, with origin
// ingest.OriginStripeEventsAPI.
//
// A pass is safe to repeat or to run beside live ingest: the inbox's unique
// (source, delivery_id) decides what is new, so a second pass recovers
// nothing and a webhook arriving after its event was recovered is a
// duplicate. Events are recorded one transaction each, so on error the
// returned Result counts the work already committed.
func Reconcile(ctx context.Context, inbox Recorder, cfg Config, since time.Time) (Result, error) {
	var res Result
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	cfg = cfg.WithDefaults()

	client := newStripeClient(cfg)
	// All follows has_more with starting_after, one page at a time, so
	// events are recorded while later pages are still to be fetched.
	for ev, err := range client.V1Events.List(ctx, listParams(cfg, since)).All(ctx) {
		if err != nil {
			return res, fmt.Errorf("list stripe events: %w", scrubKey(err, cfg.APIKey))
		}
		res.Examined++
		d, err := delivery(cfg.Source, ev)
		if err != nil {
			return res, err
		}
		rec, err := inbox.Record(ctx, d)
		switch {
		case errors.Is(err, ingest.ErrDeliveryConflict):
			// Only copies with the same origin can conflict: an earlier pass
			// recovered this event and Stripe now renders it differently,
			// since pending_webhooks drops as other endpoints succeed. It is
			// the same event; the stored copy stands.
			res.AlreadyInInbox++
		case err != nil:
			return res, fmt.Errorf("record stripe event %s: %w", ev.ID, err)
		case rec.Outcome == ingest.OutcomeAccepted:
			res.Recovered++
		case rec.Outcome == ingest.OutcomeDuplicate:
			res.AlreadyInInbox++
		default:
			return res, fmt.Errorf("record stripe event %s: unexpected outcome %q", ev.ID, rec.Outcome)
		}
	}
	return res, nil
}
