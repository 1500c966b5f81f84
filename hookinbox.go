// Package hookinbox is a self-hosted webhook inbox you can build into your
// own binary: the whole hookinbox command (serve, migrate, send, replay,
// …) plus your handlers and your tables, without forking.
//
// A provider (GitHub, Stripe, any Standard Webhooks sender) POSTs a
// webhook; hookinbox verifies its signature, records it in a PostgreSQL
// inbox keyed by the provider's delivery id and, in the same transaction,
// enqueues the River job that processes it. Your handlers run in that job:
// their database writes commit with the job's completion, and their calls
// to other systems go through follow-up jobs carrying derived idempotency
// keys, so a retry, a replay or a crash never applies an effect twice.
//
// # Quick start
//
// A module of your own (the module is not published: "go work init .
// <your clone of hookinbox>" builds against a clone, as the README's "Use
// hookinbox as a library" shows), with this main.go:
//
//	package main
//
//	import (
//		"context"
//		"embed"
//
//		"github.com/hookinbox/hookinbox"
//		"github.com/hookinbox/hookinbox/handlers"
//	)
//
//	//go:embed migrations/*.up.sql
//	var migrations embed.FS
//
//	func main() {
//		hookinbox.Main(
//			hookinbox.WithShippedHandlers(), // optional: the issue mirror, the Stripe ledger and saga
//			hookinbox.WithMigrations(hookinbox.Sub(migrations, "migrations")),
//			hookinbox.WithHandlers(func(r *handlers.Registry, d hookinbox.Deps) error {
//				return r.Register(handlers.Registration{
//					Name: "acme.stars", Provider: "github", Events: []string{"star"},
//					Ordering: handlers.EveryEvent, Batch: true,
//					Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
//						_, err := e.Tx.Exec(ctx, `INSERT INTO stars (delivery_id) VALUES ($1)
//							ON CONFLICT DO NOTHING`, e.DeliveryID)
//						return err
//					}),
//				})
//			}),
//		)
//	}
//
// and migrations/001_stars.up.sql holding
// CREATE TABLE stars (delivery_id text PRIMARY KEY). Then
//
//	go build -o myinbox . && ./myinbox init && ./myinbox serve
//
// writes a hookinbox.yaml with fresh secrets and runs hookinbox with your handler: the same flags, the same
// hookinbox.yaml (its app: section is yours, read with Deps.App.Decode),
// the same exit codes. Your migrations are applied after hookinbox's,
// tracked apart from them in hookinbox_app_migration, under the same lock.
//
// Programs that want to serve without the command line call Run with a
// Config from LoadConfig (or built in code).
//
// The handlers package documents the handler API: Registration, Event
// (its transaction, Key and EnqueueOnce), ordering and staleness; package
// handlertest runs your handlers in your tests against a real database;
// examples/custom-binary in this repository is a complete program.
package hookinbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/cli"
	"github.com/hookinbox/hookinbox/internal/config"
)

// Config is the whole configuration: what hookinbox.yaml holds.
type Config = config.Config

// LoadConfig reads a config file as serve does: ${VAR} expanded from the
// environment, the environment's overrides (HOOKINBOX_LISTEN,
// DATABASE_URL, …) applied, defaults filled, and every key validated.
func LoadConfig(path string) (Config, error) {
	cfg, err := config.Load(path, config.LookupEnv)
	if err != nil {
		return Config{}, err
	}
	if err := cli.CheckConfig(cfg); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Deps is what a handler needs from the running service: see
// handlers.Deps.
type Deps = handlers.Deps

// Option adds to what Main and Run do.
type Option func(*options)

type options struct {
	ext cli.Extensions
	app cli.AppConfig
	err error
}

// WithHandlers registers handlers (and the workers of their follow-up
// jobs) on every process that works jobs, once at startup. Several
// WithHandlers run in the order given.
func WithHandlers(register func(r *handlers.Registry, d Deps) error) Option {
	return func(o *options) {
		o.ext.Handlers = append(o.ext.Handlers, register)
	}
}

// WithMigrations adds the application's own migrations: files named
// NNN_name.up.sql at fsys's root (Sub picks a directory of an embed.FS).
// serve and migrate apply them after hookinbox's, under the same advisory
// lock, and record them in hookinbox_app_migration: their versions are a
// line of their own, so they never clash with hookinbox's. Give it once.
func WithMigrations(fsys fs.FS) Option {
	return func(o *options) {
		if o.ext.Migrations != nil {
			o.err = errors.New("hookinbox: WithMigrations given twice; put all of the application's migrations in one fs.FS")
		}
		o.ext.Migrations = fsys
	}
}

// Sub is fs.Sub for WithMigrations: the directory dir of fsys (an
// embed.FS keeps the directory in its paths). It panics on an invalid
// dir, a mistake in the program, not in its input.
func Sub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// WithShippedHandlers includes every handler hookinbox ships: the GitHub
// issue mirror, the Stripe ledger and the payment saga (the saga only when
// downstream.fulfillment_url and payments_url are set). The hookinbox
// binary is Main(WithShippedHandlers()).
func WithShippedHandlers() Option {
	return func(o *options) { o.ext.Handlers = append(o.ext.Handlers, cli.AllShipped()...) }
}

// WithGitHubIssueMirror includes the shipped github.issue_mirror handler
// alone (table github_issue_mirror).
func WithGitHubIssueMirror() Option {
	return func(o *options) { o.ext.Handlers = append(o.ext.Handlers, cli.Shipped.GitHubIssueMirror) }
}

// WithStripeLedger includes the shipped Stripe ledger handlers alone
// (charge.refunded, payment_intent.payment_failed; table ledger).
func WithStripeLedger() Option {
	return func(o *options) { o.ext.Handlers = append(o.ext.Handlers, cli.Shipped.StripeLedger) }
}

// WithPaymentSaga includes the shipped payment saga alone (registered
// when downstream.fulfillment_url and payments_url are set).
func WithPaymentSaga() Option {
	return func(o *options) { o.ext.Handlers = append(o.ext.Handlers, cli.Shipped.PaymentSaga) }
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Main runs the hookinbox command line with os.Args (serve, migrate,
// send, deliveries, replay, healthcheck, db-url, stub-downstream: the same
// flags, config file and exit codes as the hookinbox binary), and exits.
// Destinations (the config's destinations: and routes:) need no option.
func Main(opts ...Option) {
	o := collect(opts)
	if o.err != nil {
		_, _ = os.Stderr.WriteString(o.err.Error() + "\n")
		os.Exit(2)
	}
	cli.Main(o.ext)
}

// Run serves with cfg, as `serve` does, until ctx is done; then it shuts
// down gracefully within cfg.ShutdownTimeout. By default it runs role all
// (ingest and workers), applies migrations first, listens on cfg.Listen
// and cfg.Admin.Listen, connects to cfg.DatabaseURL (the embedded
// PostgreSQL when empty) and logs to stderr as cfg.Log says; WithRole,
// WithoutMigrations, WithListeners, WithPool and WithLogger change that.
// cfg is checked first, as LoadConfig checks it.
func Run(ctx context.Context, cfg Config, opts ...Option) error {
	o := collect(opts)
	if o.err != nil {
		return o.err
	}
	ac := o.app
	ac.Extensions = o.ext
	return cli.Serve(ctx, cfg, ac)
}

// WithRole runs one role of a deployment split in two (Run only):
// "ingest" receives webhooks and enqueues their jobs, "worker" works jobs,
// "all" (the default) does both.
func WithRole(role string) Option {
	return func(o *options) { o.app.Role = role }
}

// WithoutMigrations makes Run wait until someone else (another process,
// "hookinbox migrate") has applied the schema, instead of applying it.
func WithoutMigrations() Option {
	return func(o *options) { o.app.SkipMigrations = true }
}

// WithLogger sends Run's logs to logger instead of stderr; cfg.Log's
// format and level are then the logger's business.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) { o.app.Logger = logger }
}

// WithPool makes Run use pool instead of opening one on cfg.DatabaseURL.
// The pool stays the caller's: Run does not close it. It should allow 20
// connections or more: ingest and the workers share it.
func WithPool(pool *pgxpool.Pool) Option {
	return func(o *options) { o.app.Pool = pool }
}

// WithListeners makes Run serve webhooks on ingest and the admin API on
// adminLn instead of listening on cfg.Listen and cfg.Admin.Listen (a nil
// one keeps its address). Run closes them when it stops.
func WithListeners(ingest, adminLn net.Listener) Option {
	return func(o *options) { o.app.Listener, o.app.AdminListener = ingest, adminLn }
}
