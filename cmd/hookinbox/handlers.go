package main

import (
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
)

// buildRegistry registers the shipped handlers; add yours here, one line
// each (see README, "Write a handler").
func buildRegistry(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger) (*handlers.Registry, error) {
	sources := make([]handlers.Source, len(cfg.Sources))
	for i, s := range cfg.Sources {
		sources[i] = handlers.Source{Name: s.Name, Provider: s.Provider, ResourceField: s.ResourceField}
	}
	reg := handlers.NewRegistry(handlers.Config{Sources: sources, Logger: logger})
	client := &http.Client{Timeout: cfg.Downstream.Timeout.Std()}

	if err := handlers.RegisterGitHubIssueMirror(reg); err != nil {
		return nil, err
	}
	if err := handlers.RegisterStripeLedger(reg); err != nil {
		return nil, err
	}
	if d := cfg.Downstream; d.FulfillmentURL != "" && d.PaymentsURL != "" {
		if err := handlers.RegisterStripeSaga(reg, handlers.SagaConfig{
			FulfillmentURL: d.FulfillmentURL, PaymentsURL: d.PaymentsURL, FinalStatuses: d.FinalStatuses,
			Pool: pool, Client: client, Logger: logger,
		}); err != nil {
			return nil, err
		}
	} else {
		logger.Info("payment saga not registered: set downstream.fulfillment_url and downstream.payments_url to run it")
	}
	for _, s := range cfg.Sources {
		if s.ForwardURL == "" {
			if s.Provider == "standard" {
				logger.Info("forwarder not registered: source has no forward_url", "source", s.Name)
			}
			continue
		}
		if err := handlers.RegisterForwarder(reg, handlers.ForwardConfig{
			Source: s.Name, URL: s.ForwardURL, Pool: pool, Client: client, Logger: logger,
		}); err != nil {
			return nil, err
		}
	}
	logger.Info("handlers registered", "handlers", reg.Names())
	return reg, nil
}
