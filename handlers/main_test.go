package handlers_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/github"
	"github.com/hookinbox/hookinbox/handlers/handlertest"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { handlertest.Main(m) }

const clientTimeout = 300 * time.Millisecond

// testBundle is a handlertest environment running the shipped handlers,
// with a fake downstream and the log.
type testBundle struct {
	*handlertest.Env
	downstream *downstreamstub.Server
	log        *testlog.Buffer
}

type setupOpts struct {
	register    func(r *handlers.Registry) // extra handlers
	maxAttempts int
	batchSize   int // jobs.ClientConfig's BatchSize; 0 for its default
	// logLines is jobs.ClientConfig.LogDeliveriesPerSecond.
	logLines int
	// jobPerBatch is ingest.Inbox.JobPerBatch: deliveries recorded together
	// get one process_deliveries job.
	jobPerBatch bool
	// jobTimeout is jobs.ClientConfig's Timeout; 0 for its default.
	jobTimeout time.Duration
	// maxConns is handlertest.Config.MaxConns; 0 for pgx's default.
	maxConns int32
	// handOff is jobs.ClientConfig.HandOff.
	handOff *inbox.HandOff
}

// jobModes runs test once with a job per delivery and once with a job per
// ingest batch (setupOpts.jobPerBatch), in parallel.
func jobModes(t *testing.T, test func(t *testing.T, jobPerBatch bool)) {
	for name, jobPerBatch := range map[string]bool{"job per delivery": false, "job per batch": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, jobPerBatch)
		})
	}
}

func setup(t *testing.T) *testBundle { return setupWith(t, setupOpts{}) }

// setupWith runs the shipped handlers against a fresh database and a fake
// downstream, with a real River client working jobs.
func setupWith(t *testing.T, opts setupOpts) *testBundle {
	t.Helper()
	logger, logs := testlog.New(t)
	b := &testBundle{downstream: downstreamstub.New(t), log: logs}
	b.Env = handlertest.New(t, handlertest.Config{
		Logger: logger, JobPerBatch: opts.jobPerBatch, MaxConns: opts.maxConns,
		Jobs: jobs.ClientConfig{MaxAttempts: opts.maxAttempts, FetchPollInterval: 100 * time.Millisecond, LogDeliveriesPerSecond: opts.logLines, HandOff: opts.handOff,
			Jobs: config.Jobs{BatchSize: opts.batchSize, Timeout: config.Duration(opts.jobTimeout)}},
		RegisterWith: func(env *handlertest.Env, reg *handlers.Registry) error {
			return registerShipped(reg, env.Pool, b.downstream.URL, logger, opts.register)
		},
	})
	return b
}

// registerShipped registers the shipped handlers as serve does, calling
// downstreamURL's fake, and extra.
func registerShipped(reg *handlers.Registry, pool *pgxpool.Pool, downstreamURL string, logger *slog.Logger, extra func(*handlers.Registry)) error {
	if err := github.RegisterIssueMirror(reg); err != nil {
		return err
	}
	if err := stripe.RegisterLedger(reg); err != nil {
		return err
	}
	if err := stripe.RegisterSaga(reg, stripe.SagaConfig{
		FulfillmentURL: downstreamURL + "/fulfill", PaymentsURL: downstreamURL,
		Pool: pool, Client: &http.Client{Timeout: clientTimeout}, Logger: logger,
	}); err != nil {
		return err
	}
	if _, err := destination.Register(reg, destination.Config{
		Destinations: []config.Destination{{Name: "billing-forward", URL: downstreamURL + "/forward"}},
		Routes:       []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"billing-forward"}}},
		Sources:      []string{"github", "stripe", "billing"}, Pool: pool, Logger: logger,
	}); err != nil {
		return err
	}
	if extra != nil {
		extra(reg)
	}
	return nil
}

// deliver records a delivery exactly as ingest does (row + job, one
// transaction) and returns its inbox id.
func (b *testBundle) deliver(t *testing.T, source, deliveryID, eventType string, payload []byte, occurredAt time.Time) int64 {
	t.Helper()
	return b.Record(t, ingest.Delivery{Source: source, DeliveryID: deliveryID, EventType: eventType, OccurredAt: occurredAt, Payload: payload})
}

func (b *testBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.Pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

var deliverySeq atomic.Int64

func newID(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), deliverySeq.Add(1))
}
