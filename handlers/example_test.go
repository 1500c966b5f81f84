package handlers_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
)

// A handler is registered for a provider's (or one source's) events. Its
// name is part of every key it derives: pick one and keep it.
func ExampleRegistry_Register() {
	r := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{{Name: "github", Provider: "github"}}})
	err := r.Register(handlers.Registration{
		Name:     "acme.issue_counter",
		Provider: "github",
		Events:   []string{"issues", "pull_request.*"},
		Ordering: handlers.LatestState, // stale events are passed over
		Batch:    true,                 // database work only
		Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
			_, err := e.Tx.Exec(ctx, `INSERT INTO issue_count (repo, n) VALUES ($1, 1)
				ON CONFLICT (repo) DO UPDATE SET n = issue_count.n + 1`, e.Resource.Key)
			return err
		}),
	})
	fmt.Println(err, r.Names())
	// Output: <nil> [acme.issue_counter]
}

// e.Key(step) is DeriveKey(e.Source, e.DeliveryID, handler, step): a pure
// function of the delivery, the handler and the step, the same on every
// retry and replay, so a downstream that saw it once applies the call once.
func ExampleEvent_Key() {
	fmt.Println(handlers.DeriveKey("stripe", "evt_123", "acme.fulfillment", "ship"))
	fmt.Println(handlers.DeriveKey("stripe", "evt_123", "acme.fulfillment", "ship") ==
		handlers.DeriveKey("stripe", "evt_123", "acme.fulfillment", "refund"))
	// Output:
	// hkb_bab150418afe64831aeb72863a436f64ad3cc8d9
	// false
}

// ShipArgs is a follow-up job: one outside call, with its key.
type ShipArgs struct {
	Order string `json:"order"`
	Key   string `json:"key" river:"unique"`
}

func (ShipArgs) Kind() string { return "acme_ship" }

// The outside call never happens in the handler's transaction: the
// handler enqueues it, once, with the key the call will carry. The job
// and the handler's writes commit together; a replay finds the step
// already enqueued and adds nothing.
func ExampleEvent_EnqueueOnce() {
	ship := handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
		if _, err := e.Tx.Exec(ctx, `INSERT INTO shipment (order_id) VALUES ($1) ON CONFLICT DO NOTHING`, e.Resource.Key); err != nil {
			return err
		}
		enqueued, err := e.EnqueueOnce(ctx, "ship", ShipArgs{Order: e.Resource.Key, Key: e.Key("ship")}, &river.InsertOpts{Queue: handlers.QueueDownstream})
		if err == nil && !enqueued {
			e.Logger.Info("shipment already requested")
		}
		return err
	})
	_ = handlers.Registration{Name: "acme.shipping", Provider: "stripe", Events: []string{"checkout.session.completed"},
		Ordering: handlers.EveryEvent, Batch: true, Handler: ship}
}

// An EveryEvent handler sees every event, stale or not, and decides: a
// ledger books every payment whatever its order, an audit log records
// that an event came late.
func ExampleEveryEvent() {
	audit := handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
		_, err := e.Tx.Exec(ctx, `INSERT INTO audit (delivery_id, resource, late) VALUES ($1, $2, $3)
			ON CONFLICT (delivery_id) DO NOTHING`, e.DeliveryID, e.Resource.Key, e.Stale)
		return err
	})
	reg := handlers.Registration{Name: "acme.audit", Source: "billing", Events: []string{handlers.AnyEvent},
		Ordering: handlers.EveryEvent, Handler: audit}
	fmt.Println(reg.Ordering == handlers.EveryEvent)
	// Output: true
}
