package handlers

import (
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/config"
)

// Deps is what the running service gives the code that registers
// handlers (hookinbox.WithHandlers): its pool, logger, an HTTP client for
// downstream calls and the configuration.
type Deps struct {
	// Pool is the service's database pool.
	Pool *pgxpool.Pool
	// Logger is the service's logger.
	Logger *slog.Logger
	// HTTPClient has downstream.timeout as its timeout and follows no
	// redirect (a 3xx is the answer): for follow-up jobs that call other
	// systems.
	HTTPClient *http.Client
	// App is the config file's app: section, untouched but for ${VAR}
	// expansion; App.Decode(&yours) reads it.
	App config.App
	// Config is the whole parsed configuration (hookinbox.Config),
	// read-only.
	Config config.Config
}
