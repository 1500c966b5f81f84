package stripe_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/handlertest"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { handlertest.Main(m) }

const clientTimeout = 300 * time.Millisecond

// testBundle is a handlertest environment running the saga and the
// ledger, with a fake downstream and the log.
type testBundle struct {
	*handlertest.Env
	downstream *downstreamstub.Server
	log        *testlog.Buffer
}

type setupOpts struct {
	maxAttempts int
	// sagaSweepEvery is stripe.SagaConfig.SweepEvery; 0 for its default.
	sagaSweepEvery time.Duration
	// finalStatuses is stripe.SagaConfig.FinalStatuses; nil for its default.
	finalStatuses []int
}

func setup(t *testing.T) *testBundle { return setupWith(t, setupOpts{}) }

// setupWith runs the saga and the ledger against a fresh database and a
// fake downstream, with a real River client working jobs, as serve runs
// them.
func setupWith(t *testing.T, opts setupOpts) *testBundle {
	t.Helper()
	logger, logs := testlog.New(t)
	b := &testBundle{downstream: downstreamstub.New(t), log: logs}
	b.Env = handlertest.New(t, handlertest.Config{
		Sources: []handlers.Source{{Name: "stripe", Provider: "stripe"}},
		Logger:  logger,
		Jobs:    jobs.ClientConfig{MaxAttempts: opts.maxAttempts, FetchPollInterval: 100 * time.Millisecond},
		RegisterWith: func(env *handlertest.Env, reg *handlers.Registry) error {
			if err := stripe.RegisterLedger(reg); err != nil {
				return err
			}
			return stripe.RegisterSaga(reg, stripe.SagaConfig{
				FulfillmentURL: b.downstream.URL + "/fulfill", PaymentsURL: b.downstream.URL,
				Pool: env.Pool, Client: &http.Client{Timeout: clientTimeout}, SweepEvery: opts.sagaSweepEvery, Logger: logger,
				FinalStatuses: opts.finalStatuses,
			})
		},
	})
	return b
}

// deliver records a delivery exactly as ingest does (row + job, one
// transaction) and returns its inbox id.
func (b *testBundle) deliver(t *testing.T, source, deliveryID, eventType string, payload []byte, occurredAt time.Time) int64 {
	t.Helper()
	return b.Record(t, ingest.Delivery{Source: source, DeliveryID: deliveryID, EventType: eventType, OccurredAt: occurredAt, Payload: payload})
}

// status is the delivery's status.
func (b *testBundle) status(t *testing.T, inboxID int64) string {
	t.Helper()
	s, _ := b.Status(t, inboxID)
	return s
}

func (b *testBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.Pool.QueryRow(context.Background(), sql, args...).Scan(&n))
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
	tag, err := b.Pool.Exec(context.Background(),
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
