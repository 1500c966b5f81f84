// Package config reads hookinbox.yaml and the environment into plain
// structs. The command line (and a program built on hookinbox, through
// hookinbox.LoadConfig) reads it; everything below receives the values it
// needs as plain arguments.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/outbound"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/redeliver"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/verify"
)

const (
	// DefaultPath is where Load looks when neither --config nor
	// HOOKINBOX_CONFIG names a file.
	DefaultPath = "hookinbox.yaml"

	DefaultListen            = ":8080"
	DefaultMaxBodyBytes      = 5 << 20
	DefaultReadTimeout       = 10 * time.Second
	DefaultShutdownTimeout   = 20 * time.Second
	DefaultDownstreamTimeout = 10 * time.Second
	DefaultAdminListen       = "127.0.0.1:8081"
)

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
	// stored. Defaults to 5 MiB.
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

	// App is free-form: a program built on hookinbox configures its own
	// handlers here (hookinbox.Deps.App). hookinbox reads nothing in it.
	App App `yaml:"app"`

	// listenEnv and adminListenEnv name the variable that set Listen or
	// Admin.Listen, for errors: a bad address may not be in the file at all.
	listenEnv, adminListenEnv string
}

// DefaultIngestBatchWindow is on: in the benchmark it took ingest from
// 0.46 to 0.90 of pgbench's one-transaction-per-delivery rate. 8 ms, not
// 3: at a quarter of that rate (500-600 requests/s) a 3 ms window made
// batches of two or three, so each transaction's fixed cost (round trips,
// River's job insert, the commit's flush) fell on few deliveries, in serve
// and in PostgreSQL alike. 8 ms took one default serve's CPU per delivery
// there down by about 15% for 2-4 ms more ack p50 (bench/README.md). A batch of eight still closes at once when
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

	// BatchMax bounds one batch. Defaults to 100.
	BatchMax int `yaml:"batch_max"`

	// JobPerBatch enqueues one River job (process_deliveries) for the
	// deliveries a batch accepts, not one (process_delivery) each. River's
	// work per job (its row written three times, with an entry in each of
	// its indexes) is then paid once a batch, and the job's deliveries are
	// processed in one transaction, with those of the other jobs fetched
	// beside it. A delivery the batch job does not decide (its resource
	// busy, its handler failed) gets a process_delivery job of its own.
	// One default serve under steady load: 14% less CPU per delivery at
	// half of pgbench's rate, and the full rate held (bench/README.md). Off when jobs.batch_size is 1. Defaults to true.
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
	// (jobs.DefaultOrphanGrace).
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

// DefaultLogDeliveriesPerSecond shows every delivery of a trial or a quiet
// source, and keeps a busy one's log from costing what its deliveries do:
// at 3,300 deliveries/s on one default serve the two lines a delivery were
// 5-6% of serve's CPU and 2 MB of log a second (bench/README.md).
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
}

// GitHubAPI lets hookinbox ask GitHub about a source's webhook, to recover
// deliveries GitHub failed to make.
type GitHubAPI struct {
	APIURL string `yaml:"api_url"` // Defaults to https://api.github.com/
	Token  string `yaml:"token"`
	Repo   string `yaml:"repo"` // owner/name for a repository hook, or
	Org    string `yaml:"org"`  // an organisation for an org hook
	HookID int64  `yaml:"hook_id"`
	// AppID and PrivateKey (PEM, a ${VAR} holding it, or a file path)
	// reach a GitHub App's own webhook instead of Token with Repo or Org
	// and HookID.
	AppID      int64  `yaml:"app_id"`
	PrivateKey string `yaml:"private_key"`
	// RedeliverEvery runs the recovery periodically. Zero: only on request.
	RedeliverEvery Duration `yaml:"redeliver_every"`
}

// StripeAPI lets hookinbox list a source's undelivered Stripe events.
type StripeAPI struct {
	APIKey  string `yaml:"api_key"`
	APIBase string `yaml:"api_base"` // Defaults to https://api.stripe.com
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

// Source is one sender.
type Source struct {
	// Name is the route segment: [a-z0-9-]{1,64}, unique.
	Name string `yaml:"name"`

	// Provider is github, stripe, standard, hmac (with HMAC) or one of the
	// presets verify.Providers lists.
	Provider string `yaml:"provider"`

	// Secrets are the signing secrets; any one may match, so a new secret can
	// be added before the provider switches to it. Entries that expand to ""
	// (an unset ${VAR}) are dropped; at least one must remain.
	Secrets []string `yaml:"secrets"`

	// Tolerance is the maximum age, either way, of a signed timestamp
	// (every provider that signs one). Defaults to 5m.
	Tolerance Duration `yaml:"tolerance"`

	// HMAC describes the scheme of an hmac source: which header holds the
	// signature, what is signed, and where the id, event type and times
	// are. Required for hmac sources only.
	HMAC *verify.HMACScheme `yaml:"hmac"`

	// NotificationURL is the URL the sender calls, exactly as configured at
	// the sender: the sources whose signature covers it (square, twilio,
	// an hmac scheme signing {url}) need it.
	NotificationURL string `yaml:"notification_url"`

	// PayPal (paypal sources) reaches PayPal's verify-webhook-signature
	// API, which checks the signatures: a paypal source needs no secrets.
	PayPal *verify.PayPalConfig `yaml:"paypal"`

	// ForwardURL receives every delivery of the source: shorthand for a
	// destination named "<name>-forward" with this URL and a route of every
	// event of the source to it. Empty: no forwarding.
	ForwardURL string `yaml:"forward_url"`

	// ResourceField is the dotted JSON path of the id of the resource an
	// event is about, for ordering (not for github and stripe, whose
	// resources are built in). Defaults to "data.id" for standard sources,
	// to the preset's field for presets, and to none for hmac sources.
	ResourceField string `yaml:"resource_field"`

	// GitHub (github sources) enables recovering failed deliveries.
	GitHub *GitHubAPI `yaml:"github"`

	// Stripe (stripe sources) enables reconciling undelivered events.
	Stripe *StripeAPI `yaml:"stripe"`

	// Retention overrides retention.inbox for this source.
	Retention Duration `yaml:"retention"`

	// AllowShortRetention accepts a retention below ReplayHorizon, and with
	// it that a late retry of a deleted delivery is processed as new.
	AllowShortRetention bool `yaml:"allow_short_retention"`

	// BodyDedup makes a body the source already sent under the same event
	// type a duplicate whatever its delivery id (200 "duplicate", with
	// "duplicate_of"), while the inbox keeps the first. Defaults to true
	// for providers whose signature does not cover the delivery id (github,
	// gitlab, shopify, razorpay, bitbucket, twilio, linear; an hmac scheme
	// that does not sign it), whose captured requests anyone could post
	// again under a fresh id, and to false for the others. Set false for a
	// sender that sends identical bodies as distinct events.
	BodyDedup *bool `yaml:"body_dedup"`

	// RedactHeaders are request headers that verification may read but
	// that are never stored, nor shown in the admin API, the console or
	// the CLI: secrets a sender or a proxy in front of hookinbox adds
	// (an API key, a shared token). Header names, matched
	// case-insensitively. Authorization, Proxy-Authorization, Cookie and
	// the provider's own secret headers (gitlab's X-Gitlab-Token) are
	// always dropped. Defaults to none.
	RedactHeaders []string `yaml:"redact_headers"`
}

var sourceName = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// Load reads the file at path, expands ${VAR} references with lookup,
// applies env overrides and defaults, and validates. Errors name the key.
func Load(path string, lookup func(string) (string, bool)) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(raw, lookup)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse is Load without the file.
func Parse(raw []byte, lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = LookupEnv
	}
	// Expand references inside parsed scalars rather than in the raw text, so
	// a secret holding a quote or a colon cannot change the YAML's structure.
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return Config{}, err
	}
	var cfg Config
	if doc.Kind != 0 { // an empty file is an empty config
		expandNode(&doc, lookup)
		expanded, err := yaml.Marshal(&doc)
		if err != nil {
			return Config{}, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(expanded))
		dec.KnownFields(true) // a misspelt key is an error, not a silent default
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			var valueErr *valueError
			if errors.As(err, &valueErr) {
				// The line is of the re-marshalled text: parse that to find the key.
				var out yaml.Node
				if yaml.Unmarshal(expanded, &out) == nil {
					return Config{}, fmt.Errorf("%s: %s", keyAtLine(&out, valueErr.line, valueErr.column, ""), valueErr.msg)
				}
			}
			return Config{}, err
		}
	}
	if v, ok := lookup("HOOKINBOX_LISTEN"); ok && v != "" {
		cfg.Listen, cfg.listenEnv = v, "HOOKINBOX_LISTEN"
	}
	if v, ok := lookup("DATABASE_URL"); ok && v != "" {
		cfg.DatabaseURL = v
	}
	if v, ok := lookup("HOOKINBOX_ADMIN_LISTEN"); ok && v != "" {
		cfg.Admin.Listen, cfg.adminListenEnv = v, "HOOKINBOX_ADMIN_LISTEN"
	}
	if v, ok := lookup("HOOKINBOX_ADMIN_TOKEN"); ok && v != "" {
		cfg.Admin.Token = v
	}
	if v, ok := lookup("HOOKINBOX_ADMIN_HOSTS"); ok && v != "" {
		cfg.Admin.Hosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				cfg.Admin.Hosts = append(cfg.Admin.Hosts, h)
			}
		}
	}
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func expandNode(n *yaml.Node, lookup func(string) (string, bool)) {
	if n.Kind == yaml.ScalarNode {
		n.Value = expandEnv(n.Value, lookup)
	}
	for _, c := range n.Content {
		expandNode(c, lookup)
	}
}

// valueError is a scalar that could not be read; Parse names its key.
type valueError struct {
	line, column int
	msg          string
}

func (e *valueError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// keyAtLine returns the dotted path ("sources[1].tolerance") of the value
// at the given line and column of a parsed document.
func keyAtLine(n *yaml.Node, line, column int, path string) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, column, path); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			p := key.Value
			if path != "" {
				p = path + "." + key.Value
			}
			if val.Kind == yaml.ScalarNode && val.Line == line && val.Column == column {
				return p
			}
			if k := keyAtLine(val, line, column, p); k != "" {
				return k
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if c.Kind == yaml.ScalarNode && c.Line == line && c.Column == column {
				return p
			}
			if k := keyAtLine(c, line, column, p); k != "" {
				return k
			}
		}
	}
	return ""
}

// WithDefaults fills every unset field with its documented default.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DataDir == "" {
		c.DataDir = ".hookinbox"
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = Duration(DefaultReadTimeout)
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = Duration(DefaultShutdownTimeout)
	}
	if c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	if c.Admin.IdempotencyTTL == 0 {
		c.Admin.IdempotencyTTL = Duration(24 * time.Hour)
	}
	r := &c.Retention
	for d, def := range map[*Duration]time.Duration{
		&r.Inbox: 30 * 24 * time.Hour, &r.IdempotencyKeys: 7 * 24 * time.Hour,
		&r.RiverCompleted: 24 * time.Hour, &r.RiverCancelled: 7 * 24 * time.Hour, &r.RiverDiscarded: 7 * 24 * time.Hour,
		&r.Every: time.Hour, &r.Pause: 100 * time.Millisecond,
	} {
		if *d == 0 {
			*d = Duration(def)
		}
	}
	if r.BatchSize == 0 {
		r.BatchSize = 5000
	}
	if c.Jobs.MaxWorkers == 0 {
		c.Jobs.MaxWorkers = 100
	}
	if c.Ingest.JobPerBatch == nil {
		on := true
		c.Ingest.JobPerBatch = &on
	}
	if c.Ingest.BatchWindow == nil {
		w := DefaultIngestBatchWindow
		c.Ingest.BatchWindow = &w
	}
	if c.Jobs.BatchSize == 0 {
		c.Jobs.BatchSize = 200
	}
	if c.Jobs.BatchWindow == 0 {
		c.Jobs.BatchWindow = Duration(time.Millisecond)
	}
	if c.Jobs.Timeout == 0 {
		c.Jobs.Timeout = Duration(time.Minute)
	}
	if c.Jobs.RescueStuckAfter == 0 {
		c.Jobs.RescueStuckAfter = Duration(2 * time.Minute)
	}
	if c.Jobs.OrphanGrace == 0 {
		c.Jobs.OrphanGrace = Duration(jobs.DefaultOrphanGrace)
	}
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.DeliveriesPerSecond == nil {
		n := DefaultLogDeliveriesPerSecond
		c.Log.DeliveriesPerSecond = &n
	}
	if c.Downstream.Timeout == 0 {
		c.Downstream.Timeout = Duration(DefaultDownstreamTimeout)
	}
	for i := range c.Sources {
		s := &c.Sources[i]
		var kept []string
		for _, secret := range s.Secrets {
			if secret != "" {
				kept = append(kept, secret)
			}
		}
		s.Secrets = kept
		if s.Tolerance == 0 {
			s.Tolerance = Duration(verify.DefaultTolerance)
		}
		if s.ResourceField == "" {
			s.ResourceField = verify.PresetResource(s.Provider)
		}
	}
	return c
}

func (c Config) validate() error {
	for _, l := range []struct{ key, addr, env string }{{"listen", c.Listen, c.listenEnv}, {"admin.listen", c.Admin.Listen, c.adminListenEnv}} {
		if err := checkListen(l.addr); err != nil {
			if l.env != "" {
				return fmt.Errorf("%s: %w (set by %s)", l.key, err, l.env)
			}
			return fmt.Errorf("%s: %w", l.key, err)
		}
	}
	if c.MaxBodyBytes < 0 {
		return errors.New("max_body_bytes: must be positive")
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		return fmt.Errorf("log.format: %q (want text or json)", c.Log.Format)
	}
	if _, ok := LogLevels[c.Log.Level]; !ok {
		return fmt.Errorf("log.level: %q (want debug, info, warn or error)", c.Log.Level)
	}
	if n := c.Log.DeliveriesPerSecond; n != nil && *n < 0 {
		return fmt.Errorf("log.deliveries_per_second: %d (want 0, a line for every delivery, or more)", *n)
	}
	if c.Jobs.RescueStuckAfter <= c.Jobs.Timeout {
		return fmt.Errorf("jobs.rescue_stuck_after: %s must exceed jobs.timeout (%s), or running jobs would be run twice",
			c.Jobs.RescueStuckAfter.Std(), c.Jobs.Timeout.Std())
	}
	if c.Jobs.OrphanGrace.Std() < time.Minute {
		return fmt.Errorf("jobs.orphan_grace: %s is under 1m", c.Jobs.OrphanGrace.Std())
	}
	// The sweep tells a cancelled job's deliveries from lost ones by the
	// cancelled job: River must keep it until the sweep has seen it.
	if c.Retention.RiverCancelled.Std() < 2*c.Jobs.OrphanGrace.Std() {
		return fmt.Errorf("retention.river_cancelled: %s must be at least twice jobs.orphan_grace (%s), or a delivery an operator cancelled could be swept up and processed",
			c.Retention.RiverCancelled.Std(), c.Jobs.OrphanGrace.Std())
	}
	if w := c.Ingest.BatchWindow.Std(); w < 0 || w > 100*time.Millisecond {
		return errors.New("ingest.batch_window: must be between 0 (no batching) and 100ms")
	}
	if c.Jobs.BatchSize < 1 || c.Jobs.BatchSize > 10000 {
		return errors.New("jobs.batch_size: must be between 1 (no batching) and 10000")
	}
	if c.Jobs.BatchWindow < 0 || c.Jobs.BatchWindow.Std() > time.Second {
		return errors.New("jobs.batch_window: must be between 0 and 1s")
	}
	if c.Retention.BatchSize < 1 {
		return errors.New("retention.batch_size: must be positive")
	}
	if err := handlers.CheckFinalStatuses(c.Downstream.FinalStatuses); err != nil {
		return fmt.Errorf("downstream.final_statuses: %w", err)
	}
	for key, u := range map[string]string{"downstream.fulfillment_url": c.Downstream.FulfillmentURL, "downstream.payments_url": c.Downstream.PaymentsURL} {
		if err := checkURL(u); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	seen := map[string]bool{}
	for i, s := range c.Sources {
		key := fmt.Sprintf("sources[%d]", i)
		if !sourceName.MatchString(s.Name) {
			return fmt.Errorf("%s.name: %q must match [a-z0-9-]{1,64}", key, s.Name)
		}
		key = fmt.Sprintf("sources[%d] (%s)", i, s.Name)
		if seen[s.Name] {
			return fmt.Errorf("%s.name: duplicate source name", key)
		}
		seen[s.Name] = true
		if s.Provider == verify.ProviderGitHub || s.Provider == verify.ProviderStripe {
			if s.ResourceField != "" {
				return fmt.Errorf("%s.resource_field: %s sources order by their built-in resources", key, s.Provider)
			}
		}
		if keep := c.InboxRetention(s); keep < ReplayHorizon && !s.AllowShortRetention {
			field := key + ".retention"
			if s.Retention == 0 {
				field = "retention.inbox"
			}
			return fmt.Errorf("%s: %s keeps %s's deliveries less than %s, the longest a provider may still resend one "+
				"(GitHub allows manual redelivery for 3 days, Stripe retries for 3 days); a resend after its row is deleted "+
				"is processed as a new delivery. Set allow_short_retention: true on the source to accept that",
				field, keep, s.Name, ReplayHorizon)
		}
		if s.GitHub != nil {
			if s.Provider != verify.ProviderGitHub {
				return fmt.Errorf("%s.github: only github sources take GitHub API settings", key)
			}
			if err := s.RedeliverConfig().Validate(); err != nil {
				return fmt.Errorf("%s.%w", key, err)
			}
		}
		if s.Stripe != nil {
			if s.Provider != verify.ProviderStripe {
				return fmt.Errorf("%s.stripe: only stripe sources take Stripe API settings", key)
			}
			if err := s.ReconcileConfig().Validate(); err != nil {
				return fmt.Errorf("%s.%w", key, err)
			}
		}
		if err := ingest.CheckRedactHeaders(s.RedactHeaders); err != nil {
			return fmt.Errorf("%s.redact_headers%w", key, err)
		}
		if err := checkURL(s.ForwardURL); err != nil {
			return fmt.Errorf("%s.forward_url: %w", key, err)
		}
		if err := checkURL(s.NotificationURL); err != nil {
			return fmt.Errorf("%s.notification_url: %w", key, err)
		}
		if _, err := s.Verifier(); err != nil {
			var cerr *verify.ConfigError
			switch {
			case errors.Is(err, verify.ErrUnknownProvider):
				return fmt.Errorf("%s.provider: %w", key, err)
			case errors.As(err, &cerr):
				return fmt.Errorf("%s.%w", key, err)
			case errors.Is(err, verify.ErrNoSecrets):
				return fmt.Errorf("%s.secrets: no non-empty secret (is the ${VAR} it names set?)", key)
			default:
				return fmt.Errorf("%s.secrets: %w", key, err)
			}
		}
	}
	return c.validateDestinations()
}

// checkListen accepts a host:port with a numeric port. A bare port is the
// likeliest slip, and net.Listen would take it for a host name.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, convErr := strconv.ParseUint(addr, 10, 16); convErr == nil {
			return fmt.Errorf("%q is not host:port; did you mean %q?", addr, ":"+addr)
		}
		return fmt.Errorf("%q is not host:port (e.g. \":8080\" or \"127.0.0.1:8080\")", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: the port must be a number from 0 to 65535", addr)
	}
	return nil
}

// checkURL accepts "" (not configured) or an absolute http(s) URL.
func checkURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", outbound.MaskURL(raw))
	}
	return nil
}

// InboxRetention is how long the source's processed deliveries are kept.
func (c Config) InboxRetention(s Source) time.Duration {
	if s.Retention != 0 {
		return s.Retention.Std()
	}
	return c.Retention.Inbox.Std()
}

// LogLevels maps log.level values to slog levels.
var LogLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// RedeliverConfig is the source's GitHub recovery settings (zero if none).
func (s Source) RedeliverConfig() redeliver.Config {
	if s.GitHub == nil {
		return redeliver.Config{}
	}
	return redeliver.Config{Source: s.Name, APIURL: s.GitHub.APIURL, Token: s.GitHub.Token,
		Repo: s.GitHub.Repo, Org: s.GitHub.Org, HookID: s.GitHub.HookID, AppID: s.GitHub.AppID, PrivateKey: s.GitHub.PrivateKey}
}

// ReconcileConfig is the source's Stripe recovery settings (zero if none).
func (s Source) ReconcileConfig() reconcile.Config {
	if s.Stripe == nil {
		return reconcile.Config{}
	}
	return reconcile.Config{Source: s.Name, APIKey: s.Stripe.APIKey, APIBase: s.Stripe.APIBase}
}

// Verifier builds the source's signature verifier.
func (s Source) Verifier() (verify.Verifier, error) {
	return verify.New(s.VerifyConfig())
}

// VerifyConfig is the source's verify.Config, for its Verifier and for
// signing as its sender (verify.NewConfigSigner).
func (s Source) VerifyConfig() verify.Config {
	return verify.Config{Provider: s.Provider, Secrets: s.Secrets, Tolerance: s.Tolerance.Std(),
		HMAC: s.HMAC, NotificationURL: s.NotificationURL, PayPal: s.PayPal}
}

// DedupBodies says whether ingest treats a body the source already sent
// under the same event type as a duplicate (BodyDedup).
func (s Source) DedupBodies() bool {
	if s.BodyDedup != nil {
		return *s.BodyDedup
	}
	return verify.SignatureCovers(s.Provider, s.HMAC).ReplayableUnderNewID()
}

// Source returns the named source.
func (c Config) Source(name string) (Source, bool) {
	for _, s := range c.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}
