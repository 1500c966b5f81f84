package cli

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/alerts"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

// buildRegistry registers the binary's handlers (ext) and the configured
// destinations.
func buildRegistry(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger, ext Extensions,
	observe func(destination, outcome string, d time.Duration)) (*handlers.Registry, *destination.Service, error) {
	sources := make([]handlers.Source, len(cfg.Sources))
	for i, s := range cfg.Sources {
		sources[i] = handlers.Source{Name: s.Name, Provider: s.Provider, ResourceField: s.ResourceField}
	}
	if alertsOn(cfg) {
		sources = append(sources, handlers.Source{Name: alerts.Source, Provider: alerts.Source})
	}
	names := sourceNames(cfg)
	reg := handlers.NewRegistry(handlers.Config{Sources: sources, Logger: logger})
	deps := Deps{Pool: pool, Logger: logger, HTTPClient: &http.Client{Timeout: cfg.Downstream.Timeout.Std(), CheckRedirect: outbound.CheckRedirect}, App: cfg.App, Config: cfg}
	for _, register := range ext.Handlers {
		if err := register(reg, deps); err != nil {
			return nil, nil, err
		}
	}
	var dests *destination.Service
	if destinations, routes := destinationsAndRoutes(cfg); len(destinations) > 0 {
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
