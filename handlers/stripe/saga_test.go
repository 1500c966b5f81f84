package stripe_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// sagaState reads the saga and the ledger for a payment intent.
type sagaState struct {
	state   string
	credits int
	refunds int
	balance int64
}

func (b *testBundle) saga(t *testing.T, pi string) sagaState {
	t.Helper()
	var s sagaState
	require.NoError(t, b.Pool.QueryRow(context.Background(), `
		SELECT coalesce((SELECT state FROM payment_saga WHERE payment_intent = $1), ''),
		       count(*) FILTER (WHERE kind = 'credit'), count(*) FILTER (WHERE kind = 'refund'),
		       coalesce(sum(amount), 0)
		FROM ledger WHERE payment_intent = $1`, pi).Scan(&s.state, &s.credits, &s.refunds, &s.balance))
	return s
}

func (b *testBundle) waitSaga(t *testing.T, pi, state string) sagaState {
	t.Helper()
	var s sagaState
	require.Eventually(t, func() bool {
		s = b.saga(t, pi)
		return s.state == state
	}, 15*time.Second, 20*time.Millisecond, "saga for %s never reached %s", pi, state)
	return s
}

// pay delivers a payment_intent.succeeded for a new payment intent.
func (b *testBundle) pay(t *testing.T, amount int64) (evt, pi string, inboxID int64) {
	t.Helper()
	pi = newID("pi")
	evt, inboxID = b.payIntent(t, pi, amount)
	return evt, pi, inboxID
}

// payIntent delivers a payment_intent.succeeded for pi.
func (b *testBundle) payIntent(t *testing.T, pi string, amount int64) (evt string, inboxID int64) {
	t.Helper()
	evt = newID("evt")
	inboxID = b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, amount, time.Now()), time.Now())
	return evt, inboxID
}

// fulfilled pays and waits for the saga to be fulfilled and its
// fulfillment job to finish.
func (b *testBundle) fulfilled(t *testing.T, amount int64) (pi string, s sagaState) {
	t.Helper()
	_, pi, _ = b.pay(t, amount)
	s = b.waitSaga(t, pi, "fulfilled")
	b.WaitJobs(t, "stripe_fulfill")
	return pi, s
}

func TestSagaFulfillsOnceWithDerivedKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	evt, pi := newID("evt"), newID("pi")
	id := b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, 4200, time.Now()), time.Now())

	b.WaitStatus(t, id, "processed")
	s := b.waitSaga(t, pi, "fulfilled")
	require.Equal(t, sagaState{state: "fulfilled", credits: 1, balance: 4200}, s)

	// A request answered slower than the client's timeout is retried, so
	// the requests are counted by key: one key, one effect.
	key := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "fulfill")
	reqs := b.downstream.Requests("/fulfill")
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		require.Equal(t, key, r.Key)
	}
	require.Equal(t, map[string]int{key: 1}, b.downstream.Effects("/fulfill"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	require.Equal(t, map[string]any{"payment_intent": pi, "amount": 4200.0, "currency": "eur"}, body)
}

// The downstream applies the request but the response never arrives (it
// stalls past the client timeout, or hangs up): the retry carries the same
// key, so there is one effect.
func TestSagaResponseLostRetriesWithSameKey(t *testing.T) {
	t.Parallel()
	for _, lost := range []downstreamstub.Action{downstreamstub.ApplyThenStall, downstreamstub.ApplyThenHangUp} {
		b := setup(t)
		b.downstream.Script("/fulfill", lost, downstreamstub.Fail)
		evt, pi := newID("evt"), newID("pi")
		b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, 1000, time.Now()), time.Now())

		b.waitSaga(t, pi, "fulfilled")
		reqs := b.downstream.Requests("/fulfill")
		require.GreaterOrEqual(t, len(reqs), 3, "lost response, 500, success (and a retry for any answer slower than the timeout)")
		for _, r := range reqs {
			require.Equal(t, reqs[0].Key, r.Key, "every retry sends the same key")
		}
		require.Len(t, b.downstream.Effects("/fulfill"), 1, "one effect")
	}
}

// A final refusal triggers the compensation exactly once: one refund, even
// though the refund job is retried three times and the delivery replayed.
// Every fulfillment request is refused, a retry of a slow answer too.
func TestSagaRefusalCompensatesExactlyOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.downstream.SetFallback("/fulfill", downstreamstub.Refuse)
	b.downstream.Script("/v1/refunds", downstreamstub.Fail, downstreamstub.Fail, downstreamstub.Fail)
	evt, pi := newID("evt"), newID("pi")
	id := b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, 2500, time.Now()), time.Now())

	s := b.waitSaga(t, pi, "refunded")
	require.Equal(t, sagaState{state: "refunded", credits: 1, refunds: 1, balance: 0}, s)
	refunds := b.downstream.Requests("/v1/refunds")
	require.GreaterOrEqual(t, len(refunds), 4, "three failures, then success")
	require.Equal(t, handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "refund"), refunds[0].Key)
	for _, r := range refunds {
		require.Equal(t, refunds[0].Key, r.Key)
	}
	require.Len(t, b.downstream.Effects("/v1/refunds"), 1)

	// Replay the delivery twice: no new credit, fulfillment or refund.
	b.WaitJobs(t, "stripe_fulfill")
	b.WaitJobs(t, "stripe_refund")
	fulfills, refundsBefore := len(b.downstream.Requests("/fulfill")), len(b.downstream.Requests("/v1/refunds"))
	for i := 0; i < 2; i++ {
		require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id)))
	}
	b.WaitJobs(t, "stripe_refund")
	require.Equal(t, s, b.saga(t, pi))
	require.Len(t, b.downstream.Requests("/fulfill"), fulfills)
	require.Len(t, b.downstream.Requests("/v1/refunds"), refundsBefore)
	require.Equal(t, map[string]int{"completed": 1}, b.JobStates(t, "stripe_fulfill"))
	require.Equal(t, map[string]int{"completed": 1}, b.JobStates(t, "stripe_refund"))
}

func TestSagaReplayAfterProcessedCausesNothingNew(t *testing.T) {
	t.Parallel()
	b := setup(t)
	evt, pi := newID("evt"), newID("pi")
	id := b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, 700, time.Now()), time.Now())
	before := b.waitSaga(t, pi, "fulfilled")
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))
	calls := len(b.downstream.Requests("/fulfill"))

	require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id)))
	require.Equal(t, "processed", b.status(t, id))
	require.Equal(t, before, b.saga(t, pi))
	require.Len(t, b.downstream.Requests("/fulfill"), calls)
	require.Len(t, b.downstream.Effects("/fulfill"), 1)
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))
}

// The worker dies after its effects committed but before River recorded
// the job as done, so River runs the job again: no second effect. For the
// delivery job, effects and completion share one transaction; for the
// fulfillment job, the effect is remote and the same key makes the re-run
// harmless.
func TestSagaJobRerunAfterCommitHasNoSecondEffect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pi, before := b.fulfilled(t, 990)
	calls := len(b.downstream.Requests("/fulfill"))

	b.rerunCompletedJobs(t, "process_delivery")
	b.rerunCompletedJobs(t, "stripe_fulfill")
	require.Eventually(t, func() bool {
		return len(b.downstream.Requests("/fulfill")) > calls
	}, 15*time.Second, 20*time.Millisecond, "the re-run never called again")
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "process_delivery"))
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))

	require.Equal(t, before, b.saga(t, pi))
	reqs := b.downstream.Requests("/fulfill")
	for _, r := range reqs[1:] {
		require.Equal(t, reqs[0].Key, r.Key, "the re-run called again with the same key")
	}
	require.Len(t, b.downstream.Effects("/fulfill"), 1)
}

// An operator replays a delivery while its first processing is running:
// the two jobs serialise on the resource, and there is one effect.
func TestSagaConcurrentProcessingOfOneDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	evt, pi := newID("evt"), newID("pi")
	id := b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, 1234, time.Now()), time.Now())
	jobs := []int64{b.Replay(t, id), b.Replay(t, id), b.Replay(t, id)}
	for _, j := range jobs {
		require.Equal(t, "completed", b.WaitJob(t, j))
	}
	b.waitSaga(t, pi, "fulfilled")
	require.Equal(t, map[string]int{"completed": 4}, b.WaitJobs(t, "process_delivery"))
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))
	require.Equal(t, sagaState{state: "fulfilled", credits: 1, balance: 1234}, b.saga(t, pi))
	// One fulfillment job (above) under one key; a retry of an answer
	// slower than the client's timeout carries the same one.
	key := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "fulfill")
	for _, r := range b.downstream.Requests("/fulfill") {
		require.Equal(t, key, r.Key)
	}
	require.Equal(t, map[string]int{key: 1}, b.downstream.Effects("/fulfill"))
}

// The fulfillment request outlives the client's timeout while the
// downstream keeps working on it. River's retry, with the same key, gets
// 409 "in progress": that is the answer to our own retry, not a refusal.
// The saga waits (Retry-After) and ends fulfilled once, with no refund.
func TestSagaInProgressConflictIsNotARefusal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.downstream.SetProcessingDelay("/fulfill", 5*clientTimeout)
	evt, pi, _ := b.pay(t, 4200)

	s := b.waitSaga(t, pi, "fulfilled")
	require.Equal(t, sagaState{state: "fulfilled", credits: 1, balance: 4200}, s)
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))
	key := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "fulfill")
	reqs := b.downstream.Requests("/fulfill")
	require.GreaterOrEqual(t, len(reqs), 3, "the slow first request, a retry answered 409, the retry answered 200")
	for _, r := range reqs {
		require.Equal(t, key, r.Key)
	}
	require.Equal(t, map[string]int{key: 1}, b.downstream.Effects("/fulfill"))
	require.Empty(t, b.downstream.Requests("/v1/refunds"), "no refund request at all")
	require.Empty(t, b.JobStates(t, "stripe_refund"))
}

// A fulfillment job that runs again after the saga moved on (River's
// rescuer re-runs a job whose completion was lost) and is refused this
// time moves nothing and enqueues nothing: the saga is no longer
// fulfilling, and the log says so.
func TestSagaStepOnAMovedSagaDoesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pi, before := b.fulfilled(t, 300)

	b.downstream.SetFallback("/fulfill", downstreamstub.Refuse)
	b.rerunCompletedJobs(t, "stripe_fulfill")
	require.Eventually(t, func() bool {
		return strings.Contains(b.log.String(), `saga: not moved; it is no longer in the state this step expects`)
	}, 15*time.Second, 20*time.Millisecond, "the re-run never reached the saga's move")
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))

	require.Equal(t, before, b.saga(t, pi))
	require.Empty(t, b.JobStates(t, "stripe_refund"))
	require.Empty(t, b.downstream.Requests("/v1/refunds"))
}

// The same on the refund side: a refund request that outlives the client's
// timeout, then 409 for the retry, is in progress, not a failure. The saga
// ends refunded with one refund and one debit.
func TestSagaRefundInProgressConflictIsNotAFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.downstream.SetFallback("/fulfill", downstreamstub.Refuse)
	b.downstream.SetProcessingDelay("/v1/refunds", 5*clientTimeout)
	evt, pi, _ := b.pay(t, 900)

	s := b.waitSaga(t, pi, "refunded")
	require.Equal(t, sagaState{state: "refunded", credits: 1, refunds: 1}, s)
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_refund"))
	require.GreaterOrEqual(t, len(b.downstream.Requests("/v1/refunds")), 3, "the slow first request, a retry answered 409, the retry answered 200")
	key := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "refund")
	require.Equal(t, map[string]int{key: 1}, b.downstream.Effects("/v1/refunds"))
}
