package main

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/destination"
	"github.com/hookinbox/hookinbox/config"
)

// buildRegistry registers the shipped handlers and the configured
// destinations; add yours here, one line each (see README, "Write a
// handler").
func buildRegistry(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger,
	observe func(destination, outcome string, d time.Duration)) (*handlers.Registry, *destination.Service, error) {
	sources := make([]handlers.Source, len(cfg.Sources))
	for i, s := range cfg.Sources {
		sources[i] = handlers.Source{Name: s.Name, Provider: s.Provider, ResourceField: s.ResourceField}
	}
	reg := handlers.NewRegistry(handlers.Config{Sources: sources, Logger: logger})
	client := &http.Client{Timeout: cfg.Downstream.Timeout.Std()}

	if err := handlers.RegisterGitHubIssueMirror(reg); err != nil {
		return nil, nil, err
	}
	if err := handlers.RegisterStripeLedger(reg); err != nil {
		return nil, nil, err
	}
	if d := cfg.Downstream; d.FulfillmentURL != "" && d.PaymentsURL != "" {
		if err := handlers.RegisterStripeSaga(reg, handlers.SagaConfig{
			FulfillmentURL: d.FulfillmentURL, PaymentsURL: d.PaymentsURL, FinalStatuses: d.FinalStatuses,
			Pool: pool, Client: client, Logger: logger,
		}); err != nil {
			return nil, nil, err
		}
	} else {
		logger.Info("payment saga not registered: set downstream.fulfillment_url and downstream.payments_url to run it")
	}
	var dests *destination.Service
	if destinations, routes := cfg.DestinationsAndRoutes(); len(destinations) > 0 {
		names := make([]string, len(cfg.Sources))
		for i, s := range cfg.Sources {
			names[i] = s.Name
		}
		var err error
		if dests, err = destination.Register(reg, destination.Config{
			Destinations: destinations, Routes: routes, Sources: names, Pool: pool, Logger: logger, Observe: observe,
		}); err != nil {
			return nil, nil, err
		}
		logger.Info("destinations configured", "destinations", dests.Names())
	}
	logger.Info("handlers registered", "handlers", reg.Names())
	return reg, dests, nil
}
