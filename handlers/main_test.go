package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/destination"
	"github.com/hookinbox/hookinbox/handlers/github"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const clientTimeout = 300 * time.Millisecond

type testBundle struct {
	pool       *pgxpool.Pool
	client     *river.Client[pgx.Tx]
	inbox      *ingest.Inbox
	downstream *downstreamstub.Server
	log        *testlog.Buffer
}

type setupOpts struct {
	register    func(r *handlers.Registry) // extra handlers
	maxAttempts int
	batchSize   int // jobs.ClientConfig.ProcessBatchSize; 0 for its default
	// logLines is jobs.ClientConfig.LogDeliveriesPerSecond.
	logLines int
	// jobPerBatch is ingest.Inbox.JobPerBatch: deliveries recorded together
	// get one process_deliveries job.
	jobPerBatch bool
	// jobTimeout is jobs.ClientConfig.JobTimeout; 0 for its default.
	jobTimeout time.Duration
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

// fastRetry retries at once: River then makes the job available directly.
type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(10 * time.Millisecond) }

func setup(t *testing.T) *testBundle { return setupWith(t, setupOpts{}) }

// setupWith runs the shipped handlers against a fresh database and a fake
// downstream, with a real River client working jobs.
func setupWith(t *testing.T, opts setupOpts) *testBundle {
	t.Helper()
	ctx := context.Background()
	logger, logs := testlog.New(t)
	b := &testBundle{pool: testdb.New(t), downstream: downstreamstub.New(t), log: logs}

	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{
		{Name: "github", Provider: "github"},
		{Name: "stripe", Provider: "stripe"},
		{Name: "billing", Provider: "standard"},
	}})
	httpClient := &http.Client{Timeout: clientTimeout}
	require.NoError(t, github.RegisterIssueMirror(reg))
	require.NoError(t, stripe.RegisterLedger(reg))
	require.NoError(t, stripe.RegisterSaga(reg, stripe.SagaConfig{
		FulfillmentURL: b.downstream.URL + "/fulfill", PaymentsURL: b.downstream.URL,
		Pool: b.pool, Client: httpClient, Logger: logger,
	}))
	_, derr := destination.Register(reg, destination.Config{
		Destinations: []destination.Destination{{Name: "billing-forward", URL: b.downstream.URL + "/forward"}},
		Routes:       []destination.Route{{Source: "billing", Events: []string{"*"}, To: []string{"billing-forward"}}},
		Sources:      []string{"github", "stripe", "billing"}, Pool: b.pool, Logger: logger,
	})
	require.NoError(t, derr)
	if opts.register != nil {
		opts.register(reg)
	}

	client, err := jobs.NewClient(b.pool, jobs.ClientConfig{
		Registry: reg, MaxWorkers: 10, MaxAttempts: opts.maxAttempts, ProcessBatchSize: opts.batchSize,
		RetryPolicy: fastRetry{}, FetchPollInterval: 100 * time.Millisecond, Logger: logger,
		LogDeliveriesPerSecond: opts.logLines, JobTimeout: opts.jobTimeout,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			_ = client.StopAndCancel(context.Background())
		}
	})
	b.client = client
	b.inbox = ingest.NewInbox(b.pool, client)
	b.inbox.JobPerBatch = opts.jobPerBatch
	return b
}

// deliver records a delivery exactly as ingest does (row + job, one
// transaction) and returns its inbox id.
func (b *testBundle) deliver(t *testing.T, source, deliveryID, eventType string, payload []byte, occurredAt time.Time) int64 {
	t.Helper()
	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: source, DeliveryID: deliveryID, EventType: eventType, OccurredAt: occurredAt,
		Headers: http.Header{"Content-Type": {"application/json"}}, Payload: payload,
	})
	require.NoError(t, err)
	require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
	return rec.ID
}

// replay enqueues another processing job for a stored delivery, as the
// admin API's replay does.
func (b *testBundle) replay(t *testing.T, inboxID int64) int64 {
	t.Helper()
	res, err := b.client.Insert(context.Background(), jobs.ProcessDeliveryArgs{InboxID: inboxID}, nil)
	require.NoError(t, err)
	return res.Job.ID
}

func (b *testBundle) status(t *testing.T, inboxID int64) (status string, lastError *string) {
	t.Helper()
	require.NoError(t, b.pool.QueryRow(context.Background(),
		"SELECT status, last_error FROM delivery WHERE id = $1", inboxID).Scan(&status, &lastError))
	return status, lastError
}

func (b *testBundle) waitStatus(t *testing.T, inboxID int64, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, _ := b.status(t, inboxID)
		return s == want
	}, 15*time.Second, 20*time.Millisecond, "inbox row %d never became %s", inboxID, want)
}

// waitJobsFinalized waits until no job of kind is pending, available,
// running, retryable or scheduled, and returns the count per final state.
func (b *testBundle) waitJobsFinalized(t *testing.T, kind string) map[string]int {
	t.Helper()
	var states map[string]int
	require.Eventually(t, func() bool {
		states = b.jobStates(t, kind)
		return states["available"]+states["running"]+states["retryable"]+states["scheduled"]+states["pending"] == 0
	}, 15*time.Second, 20*time.Millisecond, "jobs of kind %s never finished", kind)
	return states
}

func (b *testBundle) jobStates(t *testing.T, kind string) map[string]int {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT state::text, count(*) FROM river_job WHERE kind = $1 GROUP BY state", kind)
	require.NoError(t, err)
	states := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		states[s] = n
	}
	require.NoError(t, rows.Err())
	return states
}

// waitJobDone waits for one job to reach a final state and returns it.
func (b *testBundle) waitJobDone(t *testing.T, jobID int64) string {
	t.Helper()
	var state string
	require.Eventually(t, func() bool {
		require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT state::text FROM river_job WHERE id = $1", jobID).Scan(&state))
		return state == "completed" || state == "cancelled" || state == "discarded"
	}, 15*time.Second, 20*time.Millisecond, "job %d never finished", jobID)
	return state
}

func (b *testBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

var deliverySeq atomic.Int64

func newID(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), deliverySeq.Add(1))
}
