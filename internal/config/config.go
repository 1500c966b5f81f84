// Package config reads hookinbox.yaml and the environment into plain
// structs: the keys, their defaults, ${VAR} expansion and the checks of
// the file's own values. The command line (and a program built on
// hookinbox, through hookinbox.LoadConfig) reads it; the process's
// assembly (internal/cli) builds verifiers, recovery clients and
// destinations from it and runs the checks that need them
// (cli.CheckConfig); everything below receives the values it needs as
// plain arguments.
package config

import (
	"log/slog"
	"time"
)

// DefaultPath is where Load looks when neither --config nor
// HOOKINBOX_CONFIG names a file.
const DefaultPath = "hookinbox.yaml"

// Config is the whole file. Keys are part of the public interface: other
// tools script against them.
type Config struct {
	// Listen is the ingest listener's address. Env HOOKINBOX_LISTEN overrides.
	// Defaults to ":8080".
	Listen string `yaml:"listen"`

	// DatabaseURL is a PostgreSQL URL. Env DATABASE_URL overrides. Empty means
	// an embedded PostgreSQL under DataDir.
	DatabaseURL string `yaml:"database_url"`

	// DataDir holds the embedded PostgreSQL cluster. Defaults to ".hookinbox".
	DataDir string `yaml:"data_dir"`

	// MaxBodyBytes bounds a webhook body; larger ones get 413 and nothing is
	// stored. A Kafka message's value is bounded too: a larger one is not
	// stored, logged and counted, and its offset moves on. Defaults to 5 MiB.
	MaxBodyBytes int `yaml:"max_body_bytes"`

	// ReadTimeout bounds reading one request, headers and body, so a client
	// that drips bytes cannot hold a connection. Defaults to 10s.
	ReadTimeout Duration `yaml:"read_timeout"`

	// ShutdownTimeout bounds the graceful part of shutdown (in-flight requests,
	// running jobs) after SIGTERM. Defaults to 20s.
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`

	// Sources are the webhook senders we accept, each at POST /webhooks/{name}.
	Sources []Source `yaml:"sources"`

	// Downstream configures the example handlers' outgoing calls.
	Downstream Downstream `yaml:"downstream"`

	// Admin configures the operators' listener.
	Admin Admin `yaml:"admin"`

	// Retention says how long rows are kept.
	Retention Retention `yaml:"retention"`

	// Log configures logging.
	Log Log `yaml:"log"`

	// Jobs tunes the River workers.
	Jobs Jobs `yaml:"jobs"`

	// Ingest tunes the receiving side.
	Ingest Ingest `yaml:"ingest"`

	// Destinations are the user's HTTP services deliveries are sent to,
	// and Routes say which sources' events go where.
	Destinations []Destination `yaml:"destinations"`
	Routes       []Route       `yaml:"routes"`

	// Alerts raises operational alerts and sends them to destinations.
	Alerts Alerts `yaml:"alerts"`

	// App is free-form: a program built on hookinbox configures its own
	// handlers here (hookinbox.Deps.App). hookinbox reads nothing in it.
	App App `yaml:"app"`

	// listenEnv and adminListenEnv name the variable that set Listen or
	// Admin.Listen, for errors: a bad address may not be in the file at all.
	listenEnv, adminListenEnv string
}

// DefaultIngestBatchWindow is on: batching is what takes ingest past
// pgbench's one-transaction-per-delivery rate. 8 ms, not 3: at a quarter of
// that rate a 3 ms window made batches of two or three, so each transaction's
// fixed cost (round trips, River's job insert, the commit's flush) fell on
// few deliveries, in serve and in PostgreSQL alike; 8 ms spends less CPU per
// delivery there for a few ms more ack p50 (bench/README.md, Design
// decisions, "Ingest batching"). A batch of eight still closes at once when
// another runner is free to gather the next; only when every runner is
// committing does a large batch wait the window out.
const DefaultIngestBatchWindow = Duration(8 * time.Millisecond)

// Ingest tunes how deliveries are committed.
type Ingest struct {
	// BatchWindow groups concurrent deliveries into one transaction: a
	// batch commits what arrives within this window of its first delivery
	// (each request answered after that commit, with the answer it would
	// get alone). 0 commits each request alone. Defaults to
	// DefaultIngestBatchWindow.
	BatchWindow *Duration `yaml:"batch_window"`

	// BatchMax bounds one batch. Defaults to DefaultIngestBatchMax (100).
	BatchMax int `yaml:"batch_max"`

	// MaxConnections is the most connections the webhook listener holds
	// at once; one more is answered 503 with Retry-After and closed.
	// Negative: no limit. Defaults to DefaultIngestMaxConnections (1024).
	MaxConnections int `yaml:"max_connections"`

	// MaxConnectionsPerAddress is the most of them from one client address
	// (an IPv6 client by its /64); one more is answered 429 with
	// Retry-After and closed, so one client cannot take every connection.
	// Behind a proxy every client has its address: raise this to
	// max_connections there. Negative: no limit. Defaults to
	// DefaultIngestMaxConnectionsPerAddress (128).
	MaxConnectionsPerAddress int `yaml:"max_connections_per_address"`

	// JobPerBatch enqueues one River job (process_deliveries) for the
	// deliveries a batch accepts, not one (process_delivery) each.
	// River's work per job (its row written three times, with an entry in
	// each of its indexes) is then paid once a batch, and the job's
	// deliveries are processed in one transaction, with those of the
	// other jobs fetched beside it. A delivery the batch job does not
	// decide (its resource busy, its handler failed) gets a
	// process_delivery job of its own. One default serve under steady
	// load spends less CPU and WAL per delivery and holds a higher rate
	// (bench/README.md, Design decisions, "Job per ingest batch"). Off
	// when jobs.batch_size is 1. Defaults to true.
	JobPerBatch *bool `yaml:"job_per_batch"`
}

// Jobs tunes how this process works jobs.
type Jobs struct {
	// MaxWorkers is how many jobs of each queue one process works at once.
	// Defaults to 100.
	MaxWorkers int `yaml:"max_workers"`

	// Timeout bounds one run of a job. Defaults to 1m.
	Timeout Duration `yaml:"timeout"`

	// BatchSize is the most deliveries one processing transaction holds,
	// for handlers that allow it (handlers.Registration.Batch) and events
	// no handler matches; 1 gives every delivery a transaction of its own.
	// Defaults to 200.
	BatchSize int `yaml:"batch_size"`

	// BatchWindow is how long a processing batch waits for more
	// deliveries to join it. Defaults to 1ms.
	BatchWindow Duration `yaml:"batch_window"`

	// RescueStuckAfter is how long a job may stay running before it is
	// taken for dead (its process was killed) and run again; it must exceed
	// Timeout. Defaults to 2m.
	RescueStuckAfter Duration `yaml:"rescue_stuck_after"`

	// OrphanGrace is how long a delivery left with no job to process it
	// (its job discarded by River's rescuer, or deleted in River UI) waits
	// before the orphan sweep enqueues one: counted from its receipt and
	// from the end of its last job River still has. A delivery whose job
	// is queued, retrying or running is never swept, and neither is one
	// whose last job an operator cancelled. At least 1m. Defaults to 5m
	// (DefaultOrphanGrace).
	OrphanGrace Duration `yaml:"orphan_grace"`
}

// Log configures the process's logs.
type Log struct {
	// Format is "text" or "json". Defaults to "text".
	Format string `yaml:"format"`
	// Level is "debug", "info", "warn" or "error". Defaults to "info".
	Level string `yaml:"level"`
	// DeliveriesPerSecond is the most info lines a second about deliveries
	// stored ("delivery accepted", "delivery duplicate") and, apart, about
	// deliveries processed or skipped; the next line written counts the
	// ones held back (suppressed_since_last). Errors are always logged, and
	// level debug logs every delivery. 0: a line for every delivery.
	// Defaults to DefaultLogDeliveriesPerSecond.
	DeliveriesPerSecond *int `yaml:"deliveries_per_second"`
}

// LogLevels maps log.level values to slog levels.
var LogLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// DefaultLogDeliveriesPerSecond shows every delivery of a trial or a quiet
// source, and keeps a busy one's log from costing what its deliveries do:
// under steady load a line per delivery on each side was a measurable share
// of serve's CPU and megabytes of log a second (bench/README.md, Design
// decisions, "Delivery log lines").
const DefaultLogDeliveriesPerSecond = 10

// ReplayHorizon is the longest time after which we know a provider may
// send a delivery again: GitHub keeps deliveries for manual redelivery for
// 3 days, and Stripe retries for up to 3 days. An inbox row deleted sooner
// turns such a late retry into a new delivery.
const ReplayHorizon = 72 * time.Hour

// Retention is a correctness setting before it is a disk setting: once an
// inbox row is deleted, a retry of that delivery is processed as new.
type Retention struct {
	// Inbox is how long processed deliveries are kept; sources may
	// override it. Must be at least ReplayHorizon unless a source sets
	// allow_short_retention. Defaults to 30d.
	Inbox Duration `yaml:"inbox"`

	// IdempotencyKeys is how long admin Idempotency-Key rows are kept.
	// Defaults to 7d.
	IdempotencyKeys Duration `yaml:"idempotency_keys"`

	// RiverCompleted, RiverCancelled and RiverDiscarded are how long River
	// keeps finished jobs. Defaults: 24h, 7d, 7d.
	RiverCompleted Duration `yaml:"river_completed"`
	RiverCancelled Duration `yaml:"river_cancelled"`
	RiverDiscarded Duration `yaml:"river_discarded"`

	// Every is how often the retention job runs (leader only). Defaults to 1h.
	Every Duration `yaml:"every"`

	// BatchSize is how many rows one delete removes. Defaults to 5000.
	BatchSize int `yaml:"batch_size"`

	// Pause is the rest between batches, so deletion never starves ingest.
	// Defaults to 100ms.
	Pause Duration `yaml:"pause"`
}

// Admin configures the admin API, the River UI and /metrics.
type Admin struct {
	// Listen is the admin listener's address, apart from ingest's. Env
	// HOOKINBOX_ADMIN_LISTEN overrides. Defaults to "127.0.0.1:8081".
	Listen string `yaml:"listen"`

	// Token is required from callers (Bearer, or the Basic password). Env
	// HOOKINBOX_ADMIN_TOKEN overrides. Empty is allowed only when Listen is
	// a loopback address.
	Token string `yaml:"token"`

	// Tokens are further tokens, each named and with a scope, for holders
	// who need less than admin.token allows (docs/admin.md, Scopes).
	Tokens []AdminToken `yaml:"tokens"`

	// IdempotencyTTL is how long an admin Idempotency-Key is remembered.
	// Defaults to 24h.
	IdempotencyTTL Duration `yaml:"idempotency_ttl"`

	// Pprof serves Go's profiler at /debug/pprof/ on the admin listener
	// (behind the token). Defaults to false.
	Pprof bool `yaml:"pprof"`

	// Hosts are the names the admin listener answers to besides
	// localhost, IP addresses and Listen's own host: the names operators
	// and proxies reach it by ("hookinbox-admin", "*.internal.example").
	// A request with another Host header gets 421, which is what stops a
	// page on a rebinding DNS name from using a loopback listener. Env
	// HOOKINBOX_ADMIN_HOSTS (comma-separated) overrides.
	Hosts []string `yaml:"hosts"`

	// MaxConnections and MaxConnectionsPerAddress bound the admin
	// listener's connections as ingest's keys do ingest's. Negative: no
	// limit. Default to DefaultAdminMaxConnections (256) and
	// DefaultAdminMaxConnectionsPerAddress (64).
	MaxConnections           int `yaml:"max_connections"`
	MaxConnectionsPerAddress int `yaml:"max_connections_per_address"`

	// SignIn slows token guessing per client address (docs/security.md,
	// Sign-in limits).
	SignIn SignIn `yaml:"sign_in"`
}

// AdminToken is a named admin token.
type AdminToken struct {
	// Name says whose token it is, in the audit log and in browser
	// sessions (never the token): lower case letters, digits and dashes,
	// unique, and not "admin", which is admin.token's. Required.
	Name string `yaml:"name"`

	// Token is the token, usually "${VAR}": unique among admin.token and
	// admin.tokens, and as strong as serve asks admin.token to be.
	// Required.
	Token string `yaml:"token"`

	// Scope is what the token may do: read (deliveries, payloads,
	// destinations, the console's pages, metrics), operate (read, and
	// replay, bulk replay, retry, pause, resume) or admin (everything,
	// River UI and pprof included). Required.
	Scope string `yaml:"scope"`
}

// SignIn bounds wrong admin tokens per client address: the connection's
// address (no proxy header is trusted), an IPv6 client's /64.
type SignIn struct {
	// Burst is how many wrong tokens (Bearer, Basic or the /login form) an
	// address may present before it gets 429 with Retry-After; a right
	// token spends nothing. Defaults to 10.
	Burst int `yaml:"burst"`
	// Every is how often a slowed address gets one more try. Defaults to
	// 1s.
	Every Duration `yaml:"every"`
}

// Downstream holds the URLs the shipped handlers call. With either URL
// empty the payment saga is not registered.
type Downstream struct {
	// FulfillmentURL receives POST {"payment_intent","amount","currency"}
	// for each succeeded payment.
	FulfillmentURL string `yaml:"fulfillment_url"`

	// PaymentsURL is the payments API base; refunds are POSTed to
	// {payments_url}/v1/refunds.
	PaymentsURL string `yaml:"payments_url"`

	// Timeout bounds one downstream call; a call that times out is retried
	// with the same Idempotency-Key. Defaults to 10s.
	Timeout Duration `yaml:"timeout"`

	// FinalStatuses are the 4xx statuses with which the fulfillment or
	// payments API refuses for good: a refused fulfillment is compensated
	// with a refund. 409 (the key's first request is still in progress)
	// and 429 retry later and cannot be listed. Empty defaults to
	// handlers.DefaultFinalStatuses (422).
	FinalStatuses []int `yaml:"final_statuses"`
}
