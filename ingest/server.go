// Package ingest receives webhooks over HTTP: it verifies them, records them
// in the inbox and enqueues their processing, all before answering.
//
// It is part of hookinbox's engine, importable by the module's own
// packages but not a stable API: a library user serves with the root
// package (hookinbox.Main, hookinbox.Run).
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/httpedge"
	"github.com/hookinbox/hookinbox/internal/loglimit"
	"github.com/hookinbox/hookinbox/verify"
)

// Source is one configured sender, reached at POST /webhooks/{Name}.
type Source struct {
	Name     string
	Provider string
	Verifier verify.Verifier

	// RedactHeaders are more request headers, matched case-insensitively,
	// that are dropped once the request is verified and never stored:
	// secrets a sender or a proxy adds. Authorization,
	// Proxy-Authorization, Cookie and the provider's own secret headers
	// (verify.SecretHeaders, e.g. GitLab's X-Gitlab-Token) are always
	// dropped. Defaults to none.
	RedactHeaders []string

	// DedupBodies makes a body this source already sent a duplicate (200,
	// "duplicate_of" the stored delivery) whatever its delivery id, for as
	// long as the inbox keeps the stored one. Set it for senders whose
	// signature covers neither their delivery id nor a time
	// (verify.Covered.ReplayableUnderNewID): anyone holding a captured
	// request could otherwise post it again under a fresh id. Defaults to
	// false.
	DedupBodies bool

	// DedupBodiesByType makes body dedup compare the event type too: the
	// same body under another type is another event. Set it as
	// verify.DedupBodyByType says for an "hmac" source's scheme; for
	// every other provider NewServer sets it so (where the signature covers
	// the type, and for senders that send one body under several types,
	// Shopify's), so a library's source never merges a legitimate second
	// event. Defaults to false: the type is left out, since an unsigned
	// type is whatever a replayer of a captured request says it is.
	DedupBodiesByType bool

	volatile []string        // verify.Volatile(Provider), looked up once
	redacted map[string]bool // lower-cased names of the headers never stored
}

// Config configures the ingest HTTP server.
type Config struct {
	// Sources are the senders we accept. Required.
	Sources []Source

	// Inbox stores deliveries. Required.
	Inbox *Inbox

	// Ready reports whether the service can store deliveries (database
	// reachable, schema migrated); /readyz answers 503 while it errs. The
	// listener may be public and a driver's error names the database's
	// user, name and address, so the answer says only "starting" (an error
	// wrapping ErrStarting) or "database unavailable"; the error itself
	// goes to the log. Defaults to always ready.
	Ready func(ctx context.Context) error

	// Ingest is the ingest block of hookinbox.yaml, whose defaults
	// (Ingest.WithDefaults) and checks are internal/config's: the
	// connection limits (one more connection than MaxConnections is
	// answered 503 and closed, one more from a client address than
	// MaxConnectionsPerAddress 429, so one client cannot take every
	// connection), and batching: a positive BatchWindow groups concurrent
	// deliveries into one transaction, opened with the first delivery a
	// free runner takes, which commits the deliveries that arrive within
	// the window (up to BatchMax), each answered after that commit: fewer
	// commits under load for up to BatchWindow of added latency. A
	// BatchWindow of zero gives each request a transaction of its own.
	// JobPerBatch is Inbox's (Inbox.JobPerBatch), not the server's.
	config.Ingest

	// Accepting reports whether deliveries may be stored: an error while
	// the database's schema is not yet known to be the one this binary
	// expects, so nothing is stored in, or acknowledged from, a schema
	// that may be wrong. Webhooks then get 503 unavailable with
	// Retry-After; the error goes to the log. Once it returns nil,
	// database errors are judged per request. Defaults to always nil.
	Accepting func() error

	// MaxBodyBytes bounds a request body; larger ones get 413. A body is
	// read as it arrives, so a connection holds what its client sent, never
	// what its Content-Length announces. Defaults to
	// config.DefaultMaxBodyBytes (5 MiB), max_body_bytes' default.
	MaxBodyBytes int

	// ReadTimeout bounds reading one request. Defaults to
	// config.DefaultReadTimeout (10s), read_timeout's default.
	ReadTimeout time.Duration

	// StoreTimeout bounds the inbox transaction of one request, so a hung
	// database yields a 503 before the provider gives up on us. Defaults to 5s.
	StoreTimeout time.Duration

	// BatchRunners is how many batches may form or commit at once. Few
	// runners make large batches: four kept two cores busy in the
	// benchmark with seven deliveries a batch at 32 connections (eight
	// made batches of four, and the database then costs more per row:
	// bench/README.md, Design decisions, "Ingest batching").
	// Defaults to 4.
	BatchRunners int

	// HealthOnly serves /healthz and /readyz but no webhooks: the listener
	// of a worker-only process, for its orchestrator's probes.
	HealthOnly bool

	// Observe, when set, is told about every webhook request: the source
	// (metrics.UnknownSource-style "_unknown" for names not configured), the
	// outcome ("accepted", "duplicate", or an error code such as
	// "invalid_signature") and how long the answer took.
	Observe func(source, outcome string, d time.Duration)

	// ObserveBatch, when set, is told the size of every batch transaction.
	ObserveBatch func(n int)

	// RejectLogInterval is the least time between two log lines about
	// refused requests (4xx) of one source and error code; the lines held
	// back meanwhile are counted in the next. Defaults to 1s.
	RejectLogInterval time.Duration

	// LogDeliveriesPerSecond is the most info lines about stored
	// deliveries ("delivery accepted", "delivery duplicate") written a
	// second; the next line written counts the ones held back
	// (suppressed_since_last). Refused and failed requests are logged
	// apart (RejectLogInterval, errors always), and a Logger at debug gets
	// every line. 0: a line for every delivery. Defaults to 0.
	LogDeliveriesPerSecond int

	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

func (c Config) WithDefaults() Config {
	if c.Ready == nil {
		c.Ready = func(context.Context) error { return nil }
	}
	if c.Accepting == nil {
		c.Accepting = func() error { return nil }
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = config.DefaultMaxBodyBytes
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = config.DefaultReadTimeout
	}
	c.Ingest = c.Ingest.WithDefaults()
	if c.StoreTimeout == 0 {
		c.StoreTimeout = 5 * time.Second
	}
	if c.BatchRunners == 0 {
		c.BatchRunners = 4
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RejectLogInterval == 0 {
		c.RejectLogInterval = time.Second
	}
	if c.Observe == nil {
		c.Observe = func(string, string, time.Duration) {}
	}
	if c.ObserveBatch == nil {
		c.ObserveBatch = func(int) {}
	}
	return c
}

func (c Config) validate() error {
	if c.Inbox == nil {
		return fmt.Errorf("ingest: Config.Inbox is required")
	}
	for _, s := range c.Sources {
		if s.Verifier == nil {
			return fmt.Errorf("ingest: source %q has no verifier", s.Name)
		}
		if err := config.CheckRedactHeaders(s.RedactHeaders); err != nil {
			return fmt.Errorf("ingest: source %q: RedactHeaders%w", s.Name, err)
		}
	}
	return nil
}

// Server is the ingest HTTP server.
type Server struct {
	cfg     Config
	sources map[string]Source
	logger  *slog.Logger
	app     *fiber.App
	batch   *batcher // nil: one transaction per request
	rejects *rejectLog
	lines   *loglimit.PerSecond // the stored deliveries' info lines

	readyLines *loglimit.PerSecond // /readyz's lines about a database down
}

func NewServer(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, sources: make(map[string]Source, len(cfg.Sources)), logger: cfg.Logger,
		rejects:    newRejectLog(cfg.Logger, cfg.RejectLogInterval),
		lines:      loglimit.ForLogger(cfg.Logger, cfg.LogDeliveriesPerSecond),
		readyLines: loglimit.New(1)}
	for _, src := range cfg.Sources {
		src.volatile = verify.Volatile(src.Provider)
		src.DedupBodiesByType = src.DedupBodiesByType || verify.DedupBodyByType(src.Provider, nil)
		src.redacted = redactedHeaders(src.Provider, src.RedactHeaders)
		s.sources[src.Name] = src
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "hookinbox",
		DisableStartupMessage: true,
		BodyLimit:             cfg.MaxBodyBytes,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.ReadTimeout,
		IdleTimeout:           60 * time.Second,
		ReadBufferSize:        16 << 10, // headers; proxies in front of us add some
		// Bodies are read as they arrive (httpedge.ReadBody), never
		// reserved from their Content-Length; no webhook is a multipart
		// form, so none is parsed (or spooled to disk) before routing.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		ErrorHandler:                 s.errorHandler,
	})
	httpedge.Guard(s.app, cfg.MaxBodyBytes)
	s.app.Get("/healthz", s.healthz)
	s.app.Get("/readyz", s.readyz)
	if !cfg.HealthOnly {
		s.app.Post("/webhooks/:source", s.observed)
		if cfg.BatchWindow.Std() > 0 {
			s.batch = newBatcher(cfg.Inbox, cfg.BatchWindow.Std(), cfg.BatchMax, cfg.BatchRunners, cfg.StoreTimeout, cfg.ObserveBatch)
		}
	}
	return s, nil
}

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	return s.app.Listener(httpedge.Limit(ln, httpedge.Conns{
		Max: s.cfg.MaxConnections, PerAddress: s.cfg.MaxConnectionsPerAddress}))
}

// Shutdown stops accepting connections and waits, bounded by ctx, for
// in-flight requests to finish (their batches included).
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.app.ShutdownWithContext(ctx)
	if s.batch != nil {
		s.batch.close()
	}
	return err
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// ErrStarting, wrapped in Config.Ready's error, means the process has not
// finished starting (waiting for the database, migrating): /readyz then
// says "starting", and nothing is logged, as the start logs its own tries.
var ErrStarting = errors.New("starting")

func (s *Server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	err := s.cfg.Ready(ctx)
	if err == nil {
		return c.JSON(fiber.Map{"status": "ready"})
	}
	c.Set(fiber.HeaderRetryAfter, retryAfterSeconds)
	reason := "starting"
	if !errors.Is(err, ErrStarting) {
		reason = "database unavailable"
		// Probes come every few seconds; while the database is down, one
		// line a second at most says why.
		if ok, held := s.readyLines.Allow(time.Now()); ok {
			s.logger.Warn("not ready: database unavailable", "error", err, "suppressed_since_last", held)
		}
	}
	return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "reason": reason})
}
