package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/migrations"
)

func serveCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("serve", e)
	configPath := configFlag(fs, e)
	migrate := fs.Bool("migrate", true, "apply migrations before serving (false: wait until someone else has)")
	role := fs.String("role", "all", "ingest (receive webhooks only), worker (process only) or all")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *role != "all" && *role != "ingest" && *role != "worker" {
		return fmt.Errorf("--role %q: want ingest, worker or all", *role)
	}
	cfg, err := loadConfig(*configPath, e)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, *role, *migrate, e)
}

// Serve serves with cfg as ac says, as `serve` does: the root package's
// Run.
func Serve(ctx context.Context, cfg config.Config, ac AppConfig) error {
	if err := CheckConfig(cfg); err != nil {
		return err
	}
	ac.Config = cfg
	return runApp(ctx, ac)
}

func serve(ctx context.Context, cfg config.Config, role string, migrate bool, e env) error {
	return runApp(ctx, AppConfig{Config: cfg, Role: role, SkipMigrations: !migrate, Stderr: e.stderr, Lookup: e.lookup,
		Extensions: e.ext})
}

func runApp(ctx context.Context, ac AppConfig) error {
	app, err := NewApp(ctx, ac)
	if err != nil {
		return err
	}
	return app.Run(ctx)
}

// listen opens a listener on addr; its errors name the config key and the
// variable that choose the address.
func listen(key, envVar, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s: the address is already in use (is another hookinbox serve running? stop it, "+
			"or choose another address with %s or %s in the config)", key, addr, envVar, key)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return ln, nil
}

// startWorkers waits for the database with backoff, migrates (or checks
// that someone did), calls migrated, and, when this process works jobs
// (gen is set), calls beforeRiver and starts River. It returns nil once
// River runs, or ctx's error if shutdown came first.
func startWorkers(ctx context.Context, db *database, rc *river.Client[pgx.Tx], gen *jobs.Generation, migrate bool, migs migrations.Options,
	migrated func(), beforeRiver func(context.Context) error, logger *slog.Logger) error {
	return retryUntilDone(ctx, logger, "not ready, retrying", func() error {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := db.pool.Ping(pingCtx); err != nil {
			return fmt.Errorf("database unreachable: %w", err)
		}
		if migrate {
			if _, err := migrations.UpWith(ctx, db.pool, logger, migs); err != nil {
				return err
			}
		} else if err := migrations.CheckWith(ctx, db.pool, migs); err != nil {
			return err
		}
		migrated()
		if gen == nil {
			return nil // an ingest-only process inserts jobs and never works them
		}
		if err := beforeRiver(ctx); err != nil {
			return err
		}
		if err := gen.Prepare(ctx); err != nil {
			return err
		}
		// River's own context must outlive startup: shutdown goes through
		// Stop, which lets running jobs finish.
		return rc.Start(context.WithoutCancel(ctx))
	})
}

// startGeneration records this worker's configuration once River works
// (a process that cannot must never draw older processes' work to
// itself), then waits until older processes have seen it.
func startGeneration(ctx context.Context, gen *jobs.Generation, logger *slog.Logger) error {
	if err := retryUntilDone(ctx, logger, "configuration not recorded, retrying", func() error { return gen.Start(ctx) }); err != nil {
		return err
	}
	return gen.Settle(ctx)
}

// retryUntilDone runs f until it succeeds, with backoff from 0.5 s to 15 s,
// logging msg at each failure; it returns ctx's error if ctx ends first.
func retryUntilDone(ctx context.Context, logger *slog.Logger, msg string, f func() error) error {
	delay := 500 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logger.Warn(msg, "error", err, "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 15*time.Second)
	}
}

// shutdown stops taking requests, lets in-flight ones and running jobs
// finish within budget, then cancels what is left. A job cancelled here
// rolls back and is retried by the next process: nothing is lost. It
// reports whether River, if it started, has stopped: no job runs.
func shutdown(srv *ingest.Server, adminSrv *admin.Server, senders *destination.Service, rc *river.Client[pgx.Tx], riverStarted bool, budget time.Duration, logger *slog.Logger) bool {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("ingest shutdown", "error", err)
	}
	if err := adminSrv.Shutdown(ctx); err != nil {
		logger.Warn("admin shutdown", "error", err)
	}
	if senders != nil {
		// Requests still running at the deadline are cut short and left,
		// with no attempt spent, to the next sender.
		if err := senders.Stop(ctx); err != nil {
			logger.Warn("destination requests still running at the shutdown deadline; cut short", "error", err)
		}
	}
	if !riverStarted {
		return true
	}
	if err := rc.Stop(ctx); err != nil {
		logger.Warn("jobs still running at the shutdown deadline; cancelling them", "error", err)
		hardCtx, hardCancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer hardCancel()
		if err := rc.StopAndCancel(hardCtx); err != nil {
			logger.Error("river stop", "error", err)
			return false
		}
	}
	return true
}

// closeTally writes the last ingest counts, within a few seconds.
func closeTally(t *ingest.Tally, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Close(ctx); err != nil {
		logger.Warn("last ingest counts not written", "error", err)
	}
}

// retentionConfig turns the config's retention settings into the
// retention job's.
func retentionConfig(cfg config.Config) *jobs.RetentionConfig {
	rc := &jobs.RetentionConfig{
		Inbox:           map[string]time.Duration{},
		Default:         cfg.Retention.Inbox.Std(),
		IdempotencyKeys: cfg.Retention.IdempotencyKeys.Std(),
		BatchSize:       cfg.Retention.BatchSize,
		Pause:           cfg.Retention.Pause.Std(),
	}
	for _, s := range cfg.Sources {
		rc.Inbox[s.Name] = cfg.InboxRetention(s)
		rc.Default = max(rc.Default, rc.Inbox[s.Name])
	}
	return rc
}
