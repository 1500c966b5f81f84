package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/hookinbox/hookinbox/ingest"
)

// RecoveredHeader marks a delivery that was fetched, not received. It stands
// in for the signature a webhook would carry: the event's authenticity
// comes from the authenticated API call that listed it.
const (
	RecoveredHeader = "X-Hookinbox-Recovered-Via"
	recoveredVia    = "stripe-events-api"
)

// newStripeClient builds a client of its own for one pass. stripe-go's
// package-level key and backends are left alone, so passes for several
// accounts, and tests, can run at the same time.
func newStripeClient(cfg Config) *stripe.Client {
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:        stripe.String(cfg.APIBase),
		HTTPClient: cfg.HTTPClient,
		// stripe-go's default logger writes every failed call to stderr,
		// response body included, and that body may quote the key. Errors
		// are returned to the caller instead.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	// Only the API backend is used; the others must still be non-nil.
	return stripe.NewClient(cfg.APIKey, stripe.WithBackends(&stripe.Backends{
		API: backend, Connect: backend, Uploads: backend, MeterEvents: backend,
	}))
}

// listParams asks for events that have not been delivered to every
// endpoint, created at or after since. Stripe lists newest first and keeps
// 30 days; a zero since asks for all of them.
func listParams(cfg Config, since time.Time) *stripe.EventListParams {
	p := &stripe.EventListParams{DeliverySuccess: stripe.Bool(false)}
	p.Limit = stripe.Int64(int64(cfg.PageSize))
	if !since.IsZero() {
		// Unix truncates down, so an event in since's own second is kept.
		p.CreatedRange = &stripe.RangeQueryParams{GreaterThanOrEqual: since.Unix()}
	}
	return p
}

var errNoRawJSON = errors.New("stripe-go returned an event without its raw JSON")

// delivery maps a listed event to what the inbox stores for a webhook.
//
// The payload is the event's JSON exactly as the API returned it: stripe-go
// splits each list page and keeps every item's own bytes in
// LastResponse.RawJSON. Those bytes can differ from the webhook's body for
// the same event (whitespace, key order); ingest treats a later webhook of
// the same id as a duplicate whatever its bytes, because the origins differ.
func delivery(source string, ev *stripe.Event) (ingest.Delivery, error) {
	if ev.ID == "" {
		return ingest.Delivery{}, errors.New("stripe listed an event without an id")
	}
	// Re-rendering the decoded event would drop fields stripe-go does not
	// know and turn nulls into "", so a missing raw body is an error. It
	// also stops a page that failed to decode from being half recorded.
	if ev.LastResponse == nil || len(ev.LastResponse.RawJSON) == 0 {
		return ingest.Delivery{}, fmt.Errorf("event %s: %w", ev.ID, errNoRawJSON)
	}
	var occurredAt time.Time
	if ev.Created != 0 {
		occurredAt = time.Unix(ev.Created, 0).UTC()
	}
	return ingest.Delivery{
		Source:     source,
		DeliveryID: ev.ID,
		EventType:  string(ev.Type),
		OccurredAt: occurredAt,
		Headers:    http.Header{RecoveredHeader: {recoveredVia}},
		Payload:    ev.LastResponse.RawJSON,
		Origin:     ingest.OriginStripeEventsAPI,
	}, nil
}
