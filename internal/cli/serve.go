package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/config"
	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/destination"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/metrics"
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

// Serve serves with cfg and ext, as `serve` does with role all and
// migrations: the root package's Run.
func Serve(ctx context.Context, cfg config.Config, ext Extensions) error {
	if err := CheckConfig(cfg); err != nil {
		return err
	}
	return serve(ctx, cfg, "all", true, env{stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv, ext: ext})
}

func serve(ctx context.Context, cfg config.Config, role string, migrate bool, e env) error {
	// Files that clash can never be applied: stop now rather than retry.
	migs := migrations.Options{App: e.ext.Migrations}
	if err := migrations.Validate(migs); err != nil {
		return err
	}
	logger := configLogger(e.stderr, cfg.Log).With("role", role)
	tuneGC(e.lookup, logger, gcTuning{limits: memlimit.FromCgroup, embeddedDatabase: cfg.DatabaseURL == ""})
	releaseCtx, stopRelease := context.WithCancel(ctx)
	defer stopRelease()
	go loadRelease{}.run(releaseCtx, logger)

	sources, err := ingestSources(cfg)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(cfg.Sources))
	for _, s := range cfg.Sources {
		names = append(names, s.Name)
	}
	if len(sources) == 0 {
		logger.Warn("no sources configured: every webhook will get 404 unknown_source")
	}

	// The ports first: a second serve on the same config should be told
	// at once, before it waits for a database it cannot use.
	ln, err := listen("listen", "HOOKINBOX_LISTEN", cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	adminLn, err := listen("admin.listen", "HOOKINBOX_ADMIN_LISTEN", cfg.Admin.Listen)
	if err != nil {
		return err
	}
	defer adminLn.Close()

	db, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.close(context.WithoutCancel(ctx), logger)

	m := metrics.New(db.pool, logger)
	registry, dests, err := buildRegistry(cfg, db.pool, logger, e.ext, m.ObserveDestination)
	if err != nil {
		return err
	}
	if dests != nil {
		m.WatchDestinations(dests)
	}
	periodic, addRecoveryWorker := recoveryJobs(cfg, db.pool, logger)
	var gen *jobs.Generation
	if role != "ingest" {
		if gen, err = jobs.NewGeneration(db.pool, jobs.GenerationConfig{Fingerprint: processingFingerprint(cfg, registry),
			Observe: m.ObserveDeferral, Logger: logger}); err != nil {
			return err
		}
	}
	riverClient, err := jobs.NewClient(db.pool, jobs.ClientConfig{
		Generation: gen,
		Registry:   registry, Logger: logger, ObserveDelivery: m.ObserveDelivery, ObserveBatch: m.ObserveProcessingBatch,
		InsertOnly:   role == "ingest", // enqueues; works nothing
		PeriodicJobs: periodic, AddWorkers: addRecoveryWorker,
		Retention: retentionConfig(cfg), RetentionEvery: cfg.Retention.Every.Std(),
		OrphanSweep:             &jobs.OrphanSweepConfig{Grace: cfg.Jobs.OrphanGrace.Std(), Observe: m.ObserveOrphansRequeued},
		RiverCompletedRetention: cfg.Retention.RiverCompleted.Std(),
		RiverCancelledRetention: cfg.Retention.RiverCancelled.Std(),
		RiverDiscardedRetention: cfg.Retention.RiverDiscarded.Std(),
		MaxWorkers:              cfg.Jobs.MaxWorkers,
		ProcessBatchSize:        cfg.Jobs.BatchSize,
		ProcessBatchWindow:      cfg.Jobs.BatchWindow.Std(),
		JobTimeout:              cfg.Jobs.Timeout.Std(),
		RescueStuckJobsAfter:    cfg.Jobs.RescueStuckAfter.Std(),
		LogDeliveriesPerSecond:  *cfg.Log.DeliveriesPerSecond,
	})
	if err != nil {
		return err
	}
	inbox := ingest.NewInbox(db.pool, riverClient)
	inbox.JobPerBatch = *cfg.Ingest.JobPerBatch && cfg.Jobs.BatchSize > 1
	inbox.Batchable = func(source, eventType string) bool {
		return registry.Batchable(handlers.Delivery{Source: source, EventType: eventType})
	}
	adminSrv, err := newAdmin(ctx, cfg, db.pool, riverClient, inbox, dests, m, logger)
	if err != nil {
		return err
	}
	// migrated is set once the schema is known to be this binary's, ready
	// once the workers run too. Neither is ever unset: a database lost
	// later is judged per request.
	var migrated, ready, riverStarted, sendersStarted atomic.Bool
	// The console's per-minute charts (ingest_minute), written apart from
	// the inbox every few seconds.
	tally := ingest.NewTally(db.pool, ingest.TallyConfig{Logger: logger})
	defer closeTally(tally, logger)
	srv, err := ingest.NewServer(ingest.Config{
		Sources: sources,
		Inbox:   inbox,
		Observe: func(source, outcome string, d time.Duration) {
			m.ObserveIngest(source, outcome, d)
			tally.Add(source, outcome, time.Now())
		},
		ObserveBatch: m.ObserveIngestBatch,
		Ready: func(ctx context.Context) error {
			if !ready.Load() {
				return fmt.Errorf("%w: waiting for the database", ingest.ErrStarting)
			}
			return db.pool.Ping(ctx)
		},
		Accepting: func() error {
			if !migrated.Load() {
				return errors.New("the database schema is not verified yet")
			}
			return nil
		},
		MaxBodyBytes: cfg.MaxBodyBytes,
		ReadTimeout:  cfg.ReadTimeout.Std(),
		HealthOnly:   role == "worker",
		BatchWindow:  cfg.Ingest.BatchWindow.Std(),
		BatchMax:     cfg.Ingest.BatchMax,
		Logger:       logger,

		LogDeliveriesPerSecond: *cfg.Log.DeliveriesPerSecond,
	})
	if err != nil {
		return err
	}
	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(ln) }()
	go func() { serveErr <- adminSrv.Serve(adminLn) }()
	logger.Info("hookinbox listening", "addr", ln.Addr().String(), "sources", names)
	// The console is what a new user looks for first: the line names its
	// URL and how to get in.
	adminURL := "http://" + adminLn.Addr().String()
	signIn := "none: no admin.token, so loopback only"
	if cfg.Admin.Token != "" {
		signIn = "admin.token, at " + adminURL + "/login"
	}
	logger.Info("admin listening", "addr", adminLn.Addr().String(), "console", adminURL+"/console/", "sign_in", signIn,
		"river_ui", adminURL+"/riverui/", "authenticated", cfg.Admin.Token != "")

	// The listener is up before the database: /healthz answers and /readyz
	// says 503 while we wait, so an orchestrator can tell the two apart.
	startCtx, cancelStart := context.WithCancel(ctx)
	startDone := make(chan struct{})
	go func() {
		defer close(startDone)
		// The senders record the destinations this process has before
		// River processes a delivery routed to them, so that no other
		// process shows them as unknown meanwhile.
		beforeRiver := func(ctx context.Context) error {
			if dests == nil || sendersStarted.Load() {
				return nil
			}
			if err := dests.Start(ctx); err != nil {
				return fmt.Errorf("destination senders: %w", err)
			}
			sendersStarted.Store(true)
			return nil
		}
		if startWorkers(startCtx, db, riverClient, gen, migrate, migs, func() { migrated.Store(true) }, beforeRiver, logger) != nil {
			return
		}
		riverStarted.Store(role != "ingest")
		if gen != nil && startGeneration(startCtx, gen, logger) != nil {
			return
		}
		ready.Store(true)
		logger.Info("hookinbox ready")
	}()

	select {
	case <-ctx.Done():
		logger.Info("shutting down", "budget", cfg.ShutdownTimeout.Std().String())
	case err := <-serveErr:
		logger.Error("listener failed", "error", err)
	}
	cancelStart()
	<-startDone
	var senders *destination.Service
	if sendersStarted.Load() {
		senders = dests
	}
	shutdown(srv, adminSrv, senders, riverClient, riverStarted.Load(), cfg.ShutdownTimeout.Std(), logger)
	return nil
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
// rolls back and is retried by the next process: nothing is lost.
func shutdown(srv *ingest.Server, adminSrv *admin.Server, senders *destination.Service, rc *river.Client[pgx.Tx], riverStarted bool, budget time.Duration, logger *slog.Logger) {
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
		return
	}
	if err := rc.Stop(ctx); err != nil {
		logger.Warn("jobs still running at the shutdown deadline; cancelling them", "error", err)
		hardCtx, hardCancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer hardCancel()
		if err := rc.StopAndCancel(hardCtx); err != nil {
			logger.Error("river stop", "error", err)
		}
	}
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
