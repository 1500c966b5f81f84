package cli

import (
	"io/fs"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/github"
	"github.com/hookinbox/hookinbox/handlers/stripe"
)

// Extensions is what a binary built on hookinbox adds to it.
type Extensions struct {
	// Handlers register handlers (and their follow-up workers) on every
	// process that works jobs, in order.
	Handlers []func(*handlers.Registry, Deps) error
	// Migrations are the binary's own NNN_name.up.sql files, applied after
	// hookinbox's and tracked apart from them. Nil: none.
	Migrations fs.FS
}

// Deps is handlers.Deps, named here for brevity.
type Deps = handlers.Deps

// Shipped are the handlers hookinbox ships, each an extension a binary may
// include or leave out.
var Shipped = struct {
	GitHubIssueMirror, StripeLedger, PaymentSaga func(*handlers.Registry, Deps) error
}{
	GitHubIssueMirror: func(r *handlers.Registry, _ Deps) error { return github.RegisterIssueMirror(r) },
	StripeLedger:      func(r *handlers.Registry, _ Deps) error { return stripe.RegisterLedger(r) },
	PaymentSaga: func(r *handlers.Registry, d Deps) error {
		ds := d.Config.Downstream
		if ds.FulfillmentURL == "" || ds.PaymentsURL == "" {
			d.Logger.Info("payment saga not registered: set downstream.fulfillment_url and downstream.payments_url to run it")
			return nil
		}
		return stripe.RegisterSaga(r, stripe.SagaConfig{
			FulfillmentURL: ds.FulfillmentURL, PaymentsURL: ds.PaymentsURL, FinalStatuses: ds.FinalStatuses,
			Pool: d.Pool, Client: d.HTTPClient, Logger: d.Logger,
		})
	},
}

// AllShipped is every shipped handler, in the order the default binary
// registers them.
func AllShipped() []func(*handlers.Registry, Deps) error {
	return []func(*handlers.Registry, Deps) error{Shipped.GitHubIssueMirror, Shipped.StripeLedger, Shipped.PaymentSaga}
}
