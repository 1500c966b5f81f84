package cli

import (
	"fmt"
	"slices"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/redeliver"
	"github.com/hookinbox/hookinbox/verify"
)

// The config package is plain data: it reads and checks the file's own
// values. The parts that take config's types (destinations, recovery
// clients, the Kafka consumer) own the defaults and checks of what config
// leaves to them; they are called on here, where the process is assembled.

// CheckConfig runs the checks of cfg that belong to hookinbox's parts
// rather than to the file: the handlers' final statuses, the GitHub and
// Stripe recovery settings, and destinations and routes (whose filters
// and transforms are compiled). Errors name the key, as config.Load's do;
// loadConfig and the root package's LoadConfig and Run call it.
func CheckConfig(cfg config.Config) error {
	if err := handlers.CheckFinalStatuses(cfg.Downstream.FinalStatuses); err != nil {
		return fmt.Errorf("downstream.final_statuses: %w", err)
	}
	for i, s := range cfg.Sources {
		key := fmt.Sprintf("sources[%d] (%s)", i, s.Name)
		if s.GitHub != nil {
			if err := (redeliver.Config{Source: s.Name, GitHubAPI: *s.GitHub}).Validate(); err != nil {
				return fmt.Errorf("%s.%w", key, err)
			}
		}
		if s.Stripe != nil {
			if err := (reconcile.Config{Source: s.Name, StripeAPI: *s.Stripe}).Validate(); err != nil {
				return fmt.Errorf("%s.%w", key, err)
			}
		}
	}
	dests, routes := destinationsAndRoutes(cfg)
	return destination.Validate(dests, routes, sourceNames(cfg))
}

// ingestSources builds each webhook source's verifier for ingest.
func ingestSources(cfg config.Config) ([]ingest.Source, error) {
	sources := make([]ingest.Source, 0, len(cfg.Sources))
	for _, s := range cfg.Sources {
		if s.Kafka != nil {
			continue // read from its topics, never posted
		}
		v, err := verify.New(s.VerifyConfig()) // checked by config.Load
		if err != nil {
			return nil, fmt.Errorf("sources %s: %w", s.Name, err)
		}
		sources = append(sources, ingest.Source{Name: s.Name, Provider: s.Provider, Verifier: v,
			RedactHeaders: s.RedactHeaders, DedupBodies: s.DedupBodies(),
			DedupBodiesByType: s.DedupBodiesByType()})
	}
	return sources, nil
}

// destinationsAndRoutes returns the configured destinations and routes,
// with each forward_url's expanded into a destination and a route of every
// event of its source, and the alerts' routes.
func destinationsAndRoutes(cfg config.Config) ([]config.Destination, []config.Route) {
	// Clones: appending must not write into cfg's arrays.
	dests, routes := slices.Clone(cfg.Destinations), slices.Clone(cfg.Routes)
	for _, s := range cfg.Sources {
		if s.ForwardURL == "" {
			continue
		}
		name := config.ForwardDestination(s.Name)
		dests = append(dests, config.Destination{Name: name, URL: s.ForwardURL})
		routes = append(routes, config.Route{Source: s.Name, Events: []string{"*"}, To: []string{name}})
	}
	return dests, append(routes, alertRoutes(cfg)...)
}
