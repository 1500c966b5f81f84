package stripe_test

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
	maxAttempts int
	// sagaSweepEvery is stripe.SagaConfig.SweepEvery; 0 for its default.
	sagaSweepEvery time.Duration
}

// fastRetry retries at once: River then makes the job available directly.
type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(10 * time.Millisecond) }

func setup(t *testing.T) *testBundle { return setupWith(t, setupOpts{}) }

// setupWith runs the saga and the ledger against a fresh database and a
// fake downstream, with a real River client working jobs, as serve runs
// them.
func setupWith(t *testing.T, opts setupOpts) *testBundle {
	t.Helper()
	ctx := context.Background()
	logger, logs := testlog.New(t)
	b := &testBundle{pool: testdb.New(t), downstream: downstreamstub.New(t), log: logs}

	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{{Name: "stripe", Provider: "stripe"}}})
	require.NoError(t, stripe.RegisterLedger(reg))
	require.NoError(t, stripe.RegisterSaga(reg, stripe.SagaConfig{
		FulfillmentURL: b.downstream.URL + "/fulfill", PaymentsURL: b.downstream.URL,
		Pool: b.pool, Client: &http.Client{Timeout: clientTimeout}, SweepEvery: opts.sagaSweepEvery, Logger: logger,
	}))
	client, err := jobs.NewClient(b.pool, jobs.ClientConfig{
		Registry: reg, MaxWorkers: 10, MaxAttempts: opts.maxAttempts,
		RetryPolicy: fastRetry{}, FetchPollInterval: 100 * time.Millisecond, Logger: logger,
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

func (b *testBundle) status(t *testing.T, inboxID int64) string {
	t.Helper()
	var status string
	require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT status FROM delivery WHERE id = $1", inboxID).Scan(&status))
	return status
}

func (b *testBundle) waitStatus(t *testing.T, inboxID int64, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		return b.status(t, inboxID) == want
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

// rerunCompletedJobs puts finished jobs of kind back to available, as
// River's rescuer does with a job whose worker died before River recorded
// its completion.
//
// The re-run's job state cannot tell that it finished: River's completer
// may still hold the first attempt's completion (the handler completed the
// job in its own transaction), and its update checks only that the row is
// running, so it can mark the second attempt completed while that attempt
// still runs. Tests wait for what the re-run does instead.
func (b *testBundle) rerunCompletedJobs(t *testing.T, kind string) {
	t.Helper()
	tag, err := b.pool.Exec(context.Background(),
		`UPDATE river_job SET state = 'available', finalized_at = NULL, scheduled_at = now()
		 WHERE kind = $1 AND state = 'completed'`, kind)
	require.NoError(t, err)
	require.NotZero(t, tag.RowsAffected())
}

var deliverySeq atomic.Int64

func newID(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), deliverySeq.Add(1))
}

func paymentSucceededPayload(eventID, pi string, amount int64, created time.Time) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"payment_intent.succeeded","created":%d,"data":{"object":{"id":%q,"object":"payment_intent","amount":%d,"currency":"eur","status":"succeeded"}}}`,
		eventID, created.Unix(), pi, amount))
}

func chargeRefundedPayload(eventID, charge, pi string, refunded int64, created time.Time) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":%q,"object":"charge","payment_intent":%q,"amount":5000,"amount_refunded":%d,"currency":"eur"}}}`,
		eventID, created.Unix(), charge, pi, refunded))
}

func paymentFailedPayload(eventID, pi string, created time.Time) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"payment_intent.payment_failed","created":%d,"data":{"object":{"id":%q,"object":"payment_intent","amount":900,"currency":"usd","status":"requires_payment_method"}}}`,
		eventID, created.Unix(), pi))
}
