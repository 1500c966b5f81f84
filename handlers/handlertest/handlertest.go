// Package handlertest runs handlers in tests as hookinbox runs them: a
// real PostgreSQL (one throwaway server per test binary, a fresh migrated
// database per test), a real River client working the jobs, and
// deliveries recorded exactly as ingest records them. It is for the tests
// of handlers written in a program built on hookinbox:
//
//	func TestMain(m *testing.M) { handlertest.Main(m) }
//
//	func TestStars(t *testing.T) {
//		env := handlertest.New(t, handlertest.Config{
//			Migrations: hookinbox.Sub(migrations, "migrations"),
//			Register:   func(r *handlers.Registry) error { return registerStars(r, chat.URL) },
//		})
//		id := env.Deliver(t, "github", "d1", "star", payload)
//		env.WaitStatus(t, id, "processed")
//		env.Replay(t, id) // and check that nothing new happened
//	}
//
// The server is started from the machine's PostgreSQL binaries (as root,
// it runs as the postgres user), or TEST_DATABASE_URL names one to use.
package handlertest

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/migrations"
)

// Main runs the test binary's tests with a PostgreSQL server for them.
// Call it from TestMain.
func Main(m *testing.M) { testdb.Main(m) }

// Config says what a test environment runs.
type Config struct {
	// Sources are the configured sources. Defaults to github, stripe and
	// billing (standard), each named as its provider but billing.
	Sources []handlers.Source
	// Register adds the handlers under test (and their follow-up workers).
	Register func(r *handlers.Registry) error
	// Migrations are the program's own NNN_name.up.sql files, applied after
	// hookinbox's as serve applies them. Nil: none.
	Migrations fs.FS
	// RegisterWith is Register for handlers that need the environment, a
	// saga whose follow-up jobs take the pool: env.Pool is ready, the River
	// client not started yet.
	RegisterWith func(env *Env, r *handlers.Registry) error
	// Logger receives the handlers' and River's log lines. Nil: none.
	Logger *slog.Logger
	// Jobs tunes the River client as serve's jobs: section does (attempts,
	// Jobs.BatchSize, Jobs.Timeout). Its Registry and Logger are the
	// environment's; a zero MaxWorkers, RetryPolicy or FetchPollInterval
	// gets a test's: 10 workers, a retry at once, a poll every 50 ms.
	Jobs jobs.ClientConfig
	// JobPerBatch gives deliveries recorded together (Env.Inbox's
	// RecordMany) one processing job, as serve's ingest does by default.
	JobPerBatch bool
	// MaxConns sizes Env.Pool, which the River client and Env.Inbox
	// share, as serve's ingest and workers share theirs. Zero: pgx's
	// default, max(4, CPUs).
	MaxConns int32
}

// Env is one test's running hookinbox: its database, its River client,
// and its inbox.
type Env struct {
	Pool   *pgxpool.Pool
	Client *river.Client[pgx.Tx]
	// Inbox records deliveries as ingest does; Deliver and Record use it,
	// and a test can record in a transaction of its own (Inbox.RecordTx).
	Inbox *ingest.Inbox
}

// fastRetry retries failed jobs at once: tests do not wait out backoffs.
type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(10 * time.Millisecond) }

// New starts an environment for t, stopped when t ends.
func New(t testing.TB, cfg Config) *Env {
	t.Helper()
	ctx := context.Background()
	if cfg.Sources == nil {
		cfg.Sources = []handlers.Source{{Name: "github", Provider: "github"}, {Name: "stripe", Provider: "stripe"}, {Name: "billing", Provider: "standard"}}
	}
	env := &Env{Pool: testdb.NewWithMaxConns(t, cfg.MaxConns)}
	if cfg.Migrations != nil {
		if _, err := migrations.UpWith(ctx, env.Pool, nil, migrations.Options{App: cfg.Migrations}); err != nil {
			t.Fatalf("handlertest: migrations: %v", err)
		}
	}
	reg := handlers.NewRegistry(handlers.Config{Sources: cfg.Sources, Logger: cfg.Logger})
	if err := register(env, reg, cfg); err != nil {
		t.Fatalf("handlertest: register: %v", err)
	}
	client, err := jobs.NewClient(env.Pool, clientConfig(reg, cfg))
	if err != nil {
		t.Fatalf("handlertest: %v", err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatalf("handlertest: %v", err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			_ = client.StopAndCancel(context.Background())
		}
	})
	env.Client, env.Inbox = client, ingest.NewInbox(env.Pool, client)
	env.Inbox.JobPerBatch = cfg.JobPerBatch
	return env
}

func register(env *Env, reg *handlers.Registry, cfg Config) error {
	if cfg.Register != nil {
		if err := cfg.Register(reg); err != nil {
			return err
		}
	}
	if cfg.RegisterWith != nil {
		return cfg.RegisterWith(env, reg)
	}
	return nil
}

// clientConfig is cfg.Jobs with the environment's registry and logger and
// a test's defaults.
func clientConfig(reg *handlers.Registry, cfg Config) jobs.ClientConfig {
	c := cfg.Jobs
	c.Registry, c.Logger = reg, cfg.Logger
	if c.MaxWorkers == 0 {
		c.MaxWorkers = 10
	}
	if c.RetryPolicy == nil {
		c.RetryPolicy = fastRetry{}
	}
	if c.FetchPollInterval == 0 {
		c.FetchPollInterval = 50 * time.Millisecond
	}
	return c
}

// Deliver records a delivery as ingest does (the inbox row and its
// processing job, in one transaction) and returns its inbox id.
func (e *Env) Deliver(t testing.TB, source, deliveryID, eventType string, payload []byte) int64 {
	t.Helper()
	return e.record(t, ingest.Delivery{Source: source, DeliveryID: deliveryID, EventType: eventType, Payload: payload}).ID
}

// Record records d as ingest does and returns its inbox id, failing t
// unless d is accepted (a duplicate is not). Headers default to a JSON
// Content-Type; set OccurredAt for the provider's event time.
func (e *Env) Record(t testing.TB, d ingest.Delivery) int64 {
	t.Helper()
	rec := e.record(t, d)
	if rec.Outcome != ingest.OutcomeAccepted {
		t.Fatalf("handlertest: record %s/%s: %s, not accepted", d.Source, d.DeliveryID, rec.Outcome)
	}
	return rec.ID
}

func (e *Env) record(t testing.TB, d ingest.Delivery) ingest.Recorded {
	t.Helper()
	if d.Headers == nil {
		d.Headers = http.Header{"Content-Type": {"application/json"}}
	}
	rec, err := e.Inbox.Record(context.Background(), d)
	if err != nil {
		t.Fatalf("handlertest: record: %v", err)
	}
	return rec
}

// Replay enqueues another processing of a stored delivery, as the admin
// API's replay does, and returns the job's id.
func (e *Env) Replay(t testing.TB, inboxID int64) int64 {
	t.Helper()
	var jobID int64
	if err := pgx.BeginFunc(context.Background(), e.Pool, func(tx pgx.Tx) error {
		replays, err := jobs.ReplayTx(context.Background(), tx, e.Client, []int64{inboxID}, nil)
		if err == nil {
			jobID = replays[0].JobID
		}
		return err
	}); err != nil {
		t.Fatalf("handlertest: replay: %v", err)
	}
	return jobID
}

// Downstream is a stand-in for the APIs a handler's follow-up jobs call:
// a real HTTP server that applies each Idempotency-Key's effect once and
// records every request (Requests, Effects), and can be scripted to fail
// (Script, SetFallback). NewDownstream starts one.
type Downstream = downstreamstub.Server

// Downstream actions for Script and SetFallback.
const (
	Apply           = downstreamstub.Apply
	Fail            = downstreamstub.Fail
	Refuse          = downstreamstub.Refuse
	ApplyThenStall  = downstreamstub.ApplyThenStall
	ApplyThenHangUp = downstreamstub.ApplyThenHangUp
)

// NewDownstream starts a Downstream on a free loopback port, closed when
// t ends.
func NewDownstream(t testing.TB) *Downstream { return downstreamstub.New(t) }
