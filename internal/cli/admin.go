package cli

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/metrics"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/redeliver"
)

// recoveryJobs returns the periodic GitHub redelivery jobs the config asks
// for, and a function adding their worker.
func recoveryJobs(cfg config.Config, pool *pgxpool.Pool, logger *slog.Logger) ([]*river.PeriodicJob, func(*river.Workers) error) {
	configs := map[string]redeliver.Config{}
	var periodic []*river.PeriodicJob
	var window time.Duration
	for _, s := range cfg.Sources {
		if s.GitHub == nil {
			continue
		}
		configs[s.Name] = redeliver.Config{Source: s.Name, GitHubAPI: *s.GitHub}
		if every := s.GitHub.RedeliverEvery.Std(); every > 0 {
			periodic = append(periodic, redeliver.PeriodicJob(s.Name, every))
			// Each pass looks back over two periods, so a delivery that
			// failed just before a pass is seen by the next one too.
			window = max(window, 2*every)
			logger.Info("periodic GitHub redelivery enabled", "source", s.Name, "every", every.String())
		}
	}
	return periodic, func(ws *river.Workers) error {
		return river.AddWorkerSafely(ws, redeliver.NewWorker(pool, configs, window, logger))
	}
}

// newAdmin builds the admin server with the River UI and metrics mounted.
func newAdmin(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, rc *river.Client[pgx.Tx],
	inbox *ingest.Inbox, dests *destination.Service, m *metrics.Metrics, logger *slog.Logger) (*admin.Server, error) {
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(rc, nil),
		Logger:    logger,
		Prefix:    "/riverui",
	})
	if err != nil {
		return nil, err
	}
	ac := admin.Config{
		Admin: cfg.Admin, Pool: pool, River: rc, Metrics: m.Handler(), RiverUI: startOnFirstUse(ctx, ui, logger),
		Redeliver: map[string]admin.Recovery{}, Reconcile: map[string]admin.Recovery{}, Logger: logger, Destinations: dests,
	}
	for _, s := range cfg.Sources {
		ac.Sources = append(ac.Sources, s.Name)
		if s.GitHub != nil {
			rcfg := redeliver.Config{Source: s.Name, GitHubAPI: *s.GitHub}
			ac.Redeliver[s.Name] = func(ctx context.Context, since time.Time) (any, error) {
				return redeliver.Redeliver(ctx, pool, rcfg, since)
			}
		}
		if s.Stripe != nil {
			scfg := reconcile.Config{Source: s.Name, StripeAPI: *s.Stripe}
			ac.Reconcile[s.Name] = func(ctx context.Context, since time.Time) (any, error) {
				return reconcile.Reconcile(ctx, inbox, scfg, since)
			}
		}
	}
	return admin.NewServer(ac)
}

// startOnFirstUse serves ui, starting its background services (River UI
// counts the jobs by state every few seconds, 0.2–0.7 s a count under load)
// at its first request rather than for every process whether anyone looks
// or not. Until they run, the UI counts on demand.
func startOnFirstUse(ctx context.Context, ui *riverui.Handler, logger *slog.Logger) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			if err := ui.Start(ctx); err != nil {
				logger.Warn("River UI: background counts not started; it counts on demand", "error", err)
			}
		})
		ui.ServeHTTP(w, r)
	})
}
