package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/alerts"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	inboxstore "github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/metrics"
	"github.com/hookinbox/hookinbox/internal/telemetry"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/migrations"
)

// Roles a process can run.
const (
	RoleAll    = "all"    // ingest and workers
	RoleIngest = "ingest" // receives webhooks and enqueues; works no job
	RoleWorker = "worker" // works jobs; its ingest listener answers health checks only
)

// AppConfig is what one hookinbox process runs. Only Config is required.
type AppConfig struct {
	// Config is the checked configuration (loadConfig, or config.Load then
	// CheckConfig).
	Config config.Config
	// Role is RoleAll (the default), RoleIngest or RoleWorker.
	Role string
	// SkipMigrations waits for someone else to apply the schema instead of
	// applying it (serve --migrate=false).
	SkipMigrations bool
	// Logger receives every log line. Nil: one configured by Config.Log,
	// writing to Stderr, with the role attached.
	Logger *slog.Logger
	// Stderr is where the default logger writes. Nil: os.Stderr.
	Stderr io.Writer
	// Lookup reads the environment (the GC tuning's variables). Nil:
	// os.LookupEnv.
	Lookup func(string) (string, bool)
	// Pool is an existing pool to use. Nil: one on Config.DatabaseURL, or
	// the embedded PostgreSQL when that is empty. A given pool is the
	// caller's to close, after Stop.
	Pool *pgxpool.Pool
	// Listener and AdminListener are listeners to serve on. Nil: listen on
	// Config.Listen and Config.Admin.Listen. The App closes them when it
	// stops.
	Listener, AdminListener net.Listener
	// Extensions are a binary's own handlers and migrations.
	Extensions Extensions
	// TracerProvider, when set, turns tracing on and receives the spans
	// (it becomes OpenTelemetry's global provider). Nil: the OTEL_*
	// environment decides (telemetry.Setup).
	TracerProvider trace.TracerProvider
}

// App is one hookinbox process: its listeners, database pool, River client,
// destination senders, sweeps and their orderly shutdown. NewApp builds it,
// Start serves, Stop shuts it down; Run does all three.
type App struct {
	cfg    config.Config
	role   string
	logger *slog.Logger
	migs   migrations.Options
	// migrate applies the schema at startup (else waits for it).
	migrate bool
	// tracing: the environment turned OpenTelemetry tracing on.
	tracing bool

	ln, adminLn net.Listener
	db          *database
	gen         *jobs.Generation
	river       *river.Client[pgx.Tx]
	dests       *destination.Service
	tally       *ingest.Tally
	srv         *ingest.Server
	adminSrv    *admin.Server
	kafka       consumers
	alerts      *alerts.Evaluator // nil: no alert rules
	names       []string
	// handOff passes what ingest stores to processing, in a process that
	// does both (role all); nil otherwise.
	handOff *inboxstore.HandOff

	// migrated is set once the schema is known to be this binary's, ready
	// once the workers run too. Neither is ever unset: a database lost
	// later is judged per request.
	migrated, ready, riverStarted, sendersStarted atomic.Bool

	serveErr    chan error
	cancelStart context.CancelFunc
	startDone   chan struct{}
	stopRelease context.CancelFunc
	closers     []func()
}

// NewApp builds the process ac describes: it opens its listeners first (a
// second serve on the same config is told at once, before it waits for a
// database it cannot use), then its database pool, and wires the rest. It
// serves nothing until Start.
func NewApp(ctx context.Context, ac AppConfig) (_ *App, err error) {
	a, err := newApp(ac)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err := a.open(ctx, ac); err != nil {
		return nil, err
	}
	if err := a.wire(ctx, ac.Extensions); err != nil {
		return nil, err
	}
	return a, nil
}

func lookupOr(lookup func(string) (string, bool), name string) string {
	v, _ := lookup(name)
	return v
}

// weakToken refuses a token anyone could guess, naming its key (never the
// token) and how to make one.
func weakToken(key, why, hint string) error {
	return fmt.Errorf("%s %s: anyone who can reach the admin listener could guess it; %sset %d or more random characters (openssl rand -hex 32)",
		key, why, hint, admin.MinTokenLength)
}

func newApp(ac AppConfig) (*App, error) {
	if ac.Role == "" {
		ac.Role = RoleAll
	}
	if ac.Role != RoleAll && ac.Role != RoleIngest && ac.Role != RoleWorker {
		return nil, fmt.Errorf("role %q: want ingest, worker or all", ac.Role)
	}
	if ac.Lookup == nil {
		ac.Lookup = os.LookupEnv
	}
	if ac.Stderr == nil {
		ac.Stderr = os.Stderr
	}
	if why := admin.WeakToken(ac.Config.Admin.Token); why != "" {
		return nil, weakToken("admin.token (HOOKINBOX_ADMIN_TOKEN)", why, fmt.Sprintf("run \"%s init\" for a config with a generated token, or ", commandName()))
	}
	for i, t := range ac.Config.Admin.Tokens {
		if why := admin.WeakToken(t.Token); why != "" {
			return nil, weakToken(fmt.Sprintf("admin.tokens[%d] (%s).token", i, t.Name), why, "")
		}
	}
	// Files that clash can never be applied: stop now rather than retry.
	migs := migrations.Options{App: ac.Extensions.Migrations}
	if err := migrations.Validate(migs); err != nil {
		return nil, err
	}
	logger := ac.Logger
	if logger == nil {
		logger = configLogger(ac.Stderr, ac.Config.Log).With("role", ac.Role)
	}
	a := &App{cfg: ac.Config, role: ac.Role, logger: logger, migs: migs, migrate: !ac.SkipMigrations,
		serveErr: make(chan error, 2), startDone: make(chan struct{})}
	tuneGC(ac.Lookup, logger, gcTuning{limits: memlimit.FromCgroup, embeddedDatabase: ac.Config.DatabaseURL == "" && ac.Pool == nil})
	if ac.TracerProvider != nil {
		a.tracing = true
		telemetry.Use(ac.TracerProvider)
	} else if a.tracing = telemetry.Enabled(ac.Lookup); a.tracing {
		shutdown, err := telemetry.Setup(context.Background(), ac.Lookup)
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(ctx); err != nil {
				logger.Warn("traces not all exported", "error", err)
			}
		})
		logger.Info("tracing on", "exporter", lookupOr(ac.Lookup, "OTEL_TRACES_EXPORTER"))
	}
	var releaseCtx context.Context
	releaseCtx, a.stopRelease = context.WithCancel(context.Background())
	go loadRelease{}.run(releaseCtx, logger)
	return a, nil
}

// open takes the listeners and the database.
func (a *App) open(ctx context.Context, ac AppConfig) error {
	var err error
	if a.ln = ac.Listener; a.ln == nil {
		if a.ln, err = listen("listen", "HOOKINBOX_LISTEN", a.cfg.Listen); err != nil {
			return err
		}
	}
	a.closers = append(a.closers, func() { _ = a.ln.Close() })
	if a.adminLn = ac.AdminListener; a.adminLn == nil {
		if a.adminLn, err = listen("admin.listen", "HOOKINBOX_ADMIN_LISTEN", a.cfg.Admin.Listen); err != nil {
			return err
		}
	}
	a.closers = append(a.closers, func() { _ = a.adminLn.Close() })
	if ac.Pool != nil {
		a.db = &database{pool: ac.Pool, borrowed: true}
	} else if a.db, err = openDatabase(ctx, a.cfg, a.logger); err != nil {
		return err
	}
	a.closers = append(a.closers, func() { a.db.close(context.WithoutCancel(ctx), a.logger) })
	return nil
}

// wire builds the registry, River's client, the inbox and the servers.
func (a *App) wire(ctx context.Context, ext Extensions) error {
	cfg, logger, pool := a.cfg, a.logger, a.db.pool
	sources, err := ingestSources(cfg)
	if err != nil {
		return err
	}
	for _, s := range cfg.Sources {
		a.names = append(a.names, s.Name)
	}
	if len(cfg.Sources) == 0 {
		logger.Warn("no sources configured: every webhook will get 404 unknown_source")
	}
	m := metrics.New(pool, logger)
	registry, dests, err := buildRegistry(cfg, pool, logger, ext, m.ObserveDestination)
	if err != nil {
		return err
	}
	if a.dests = dests; dests != nil {
		m.WatchDestinations(dests)
	}
	if a.role != RoleIngest {
		if a.gen, err = jobs.NewGeneration(pool, jobs.GenerationConfig{Fingerprint: processingFingerprint(cfg, registry),
			Observe: m.ObserveDeferral, Logger: logger}); err != nil {
			return err
		}
	}
	if a.role == RoleAll && cfg.Jobs.BatchSize > 1 {
		a.handOff = inboxstore.NewHandOff() // only a processing batch takes from it
	}
	if a.river, err = jobs.NewClient(pool, a.clientConfig(registry, m)); err != nil {
		return err
	}
	inbox := ingest.NewInbox(pool, a.river)
	inbox.HandOff = a.handOff
	if a.alerts != nil {
		a.alerts.Inbox = ingest.NewInbox(pool, alerts.OnQueue(a.river))
	}
	inbox.JobPerBatch = *cfg.Ingest.JobPerBatch && cfg.Jobs.BatchSize > 1
	inbox.Batchable = func(source, eventType string) bool {
		return registry.Batchable(handlers.Delivery{Source: source, EventType: eventType})
	}
	if a.adminSrv, err = newAdmin(ctx, cfg, pool, a.river, inbox, dests, m, logger); err != nil {
		return err
	}
	// The console's per-minute charts (ingest_minute), written apart from
	// the inbox every few seconds.
	a.tally = ingest.NewTally(pool, ingest.TallyConfig{Logger: logger})
	a.closers = append(a.closers, func() { closeTally(a.tally, logger) })
	if a.srv, err = ingest.NewServer(a.ingestConfig(sources, inbox, m)); err != nil {
		return err
	}
	if a.role != RoleWorker {
		observe := func(source, outcome string, d time.Duration) {
			m.ObserveIngest(source, outcome, d)
			a.tally.Add(source, outcome, time.Now())
		}
		a.kafka.list, err = kafkaConsumers(cfg, pool, inbox, m, observe, logger)
	}
	return err
}

// clientConfig is River's client configuration for this process.
func (a *App) clientConfig(registry *handlers.Registry, m *metrics.Metrics) jobs.ClientConfig {
	cfg := a.cfg
	periodic, addRecoveryWorker := recoveryJobs(cfg, a.db.pool, a.logger)
	addWorkers := addRecoveryWorker
	if alertsOn(cfg) {
		// Evaluated by whichever worker takes the periodic job; its
		// advisory lock keeps two from raising the same alert.
		a.alerts = &alerts.Evaluator{Rules: alertRules(cfg), ConsoleURL: "http://" + a.adminLn.Addr().String() + "/console/"}
		periodic = append(periodic, alerts.PeriodicJob(cfg.Alerts.Every.Std()))
		addWorkers = func(ws *river.Workers) error {
			if err := addRecoveryWorker(ws); err != nil {
				return err
			}
			return river.AddWorkerSafely(ws, alerts.NewWorker(a.db.pool, a.alerts, a.logger))
		}
	}
	var middleware []rivertype.Middleware
	if a.tracing {
		// A job's span links to the span that enqueued it (the webhook's,
		// its batch's): River jobs run seconds to days later.
		middleware = append(middleware, otelriver.NewMiddleware(&otelriver.MiddlewareConfig{EnableTracePropagation: true,
			EnableWorkSpanJobKindSuffix: true}))
	}
	return jobs.ClientConfig{
		Middleware: middleware,
		Generation: a.gen,
		Registry:   registry, Logger: a.logger, ObserveDelivery: m.ObserveDelivery, ObserveBatch: m.ObserveProcessingBatch,
		HandOff:      a.handOff,
		InsertOnly:   a.role == RoleIngest, // enqueues; works nothing
		PeriodicJobs: periodic, AddWorkers: addWorkers,
		Jobs:      cfg.Jobs,
		Retention: retentionConfig(cfg), RetentionEvery: cfg.Retention.Every.Std(),
		OrphanSweep:             &jobs.OrphanSweepConfig{Observe: m.ObserveOrphansRequeued},
		RiverCompletedRetention: cfg.Retention.RiverCompleted.Std(),
		RiverCancelledRetention: cfg.Retention.RiverCancelled.Std(),
		RiverDiscardedRetention: cfg.Retention.RiverDiscarded.Std(),
		LogDeliveriesPerSecond:  *cfg.Log.DeliveriesPerSecond,
	}
}

// ingestConfig is the webhook server's configuration for this process.
func (a *App) ingestConfig(sources []ingest.Source, inbox *ingest.Inbox, m *metrics.Metrics) ingest.Config {
	cfg := a.cfg
	return ingest.Config{
		Sources: sources,
		Inbox:   inbox,
		Observe: func(source, outcome string, d time.Duration) {
			m.ObserveIngest(source, outcome, d)
			a.tally.Add(source, outcome, time.Now())
		},
		ObserveBatch: m.ObserveIngestBatch,
		Ready: func(ctx context.Context) error {
			if !a.ready.Load() {
				return fmt.Errorf("%w: waiting for the database", ingest.ErrStarting)
			}
			return a.db.pool.Ping(ctx)
		},
		Accepting: func() error {
			if !a.migrated.Load() {
				return errors.New("the database schema is not verified yet")
			}
			return nil
		},
		MaxBodyBytes: cfg.MaxBodyBytes,
		ReadTimeout:  cfg.ReadTimeout.Std(),
		HealthOnly:   a.role == RoleWorker,
		Ingest:       cfg.Ingest,
		Logger:       a.logger,

		LogDeliveriesPerSecond: *cfg.Log.DeliveriesPerSecond,
	}
}

// close releases what NewApp opened, newest first.
func (a *App) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
	if a.stopRelease != nil {
		a.stopRelease()
	}
}
