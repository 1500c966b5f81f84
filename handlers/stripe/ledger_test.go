package stripe_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

type ledgerEntry struct {
	kind, reference string
	amount          int64
}

func (b *testBundle) ledger(t *testing.T, pi string) []ledgerEntry {
	t.Helper()
	rows, err := b.Pool.Query(context.Background(), "SELECT kind, reference, amount FROM ledger WHERE payment_intent = $1 ORDER BY id", pi)
	require.NoError(t, err)
	defer rows.Close()
	var out []ledgerEntry
	for rows.Next() {
		var e ledgerEntry
		require.NoError(t, rows.Scan(&e.kind, &e.reference, &e.amount))
		out = append(out, e)
	}
	require.NoError(t, rows.Err())
	return out
}

// Partial refunds book their increments; a replay or an older event books
// nothing more.
func TestLedgerChargeRefunded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ch, pi := newID("ch"), newID("pi")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)

	first := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e1", ch, pi, 500, t0), t0)
	b.WaitStatus(t, first, "processed")
	second := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e2", ch, pi, 1200, t0.Add(time.Minute)), t0.Add(time.Minute))
	b.WaitStatus(t, second, "processed")
	want := []ledgerEntry{{"charge_refunded", ch + ":500", -500}, {"charge_refunded", ch + ":1200", -700}}
	require.Equal(t, want, b.ledger(t, pi))

	require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, first)))
	require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, second)))
	require.Equal(t, want, b.ledger(t, pi), "replays book nothing")
}

func TestLedgerChargeRefundedOutOfOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ch, pi := newID("ch"), newID("pi")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	newer := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e2", ch, pi, 1200, t0.Add(time.Minute)), t0.Add(time.Minute))
	b.WaitStatus(t, newer, "processed")
	older := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e1", ch, pi, 500, t0), t0)
	b.WaitStatus(t, older, "processed")
	require.Equal(t, []ledgerEntry{{"charge_refunded", ch + ":1200", -1200}}, b.ledger(t, pi))
}

func TestLedgerPaymentFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pi := newID("pi")
	e1, e2 := newID("evt"), newID("evt")
	id1 := b.deliver(t, "stripe", e1, "payment_intent.payment_failed", paymentFailedPayload(e1, pi, time.Now()), time.Now())
	id2 := b.deliver(t, "stripe", e2, "payment_intent.payment_failed", paymentFailedPayload(e2, pi, time.Now()), time.Now())
	b.WaitStatus(t, id1, "processed")
	b.WaitStatus(t, id2, "processed")
	require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id1)))
	require.ElementsMatch(t, []ledgerEntry{{"payment_failed", e1, 0}, {"payment_failed", e2, 0}}, b.ledger(t, pi))
}

// debits are a payment intent's negative ledger entries.
func (b *testBundle) debits(t *testing.T, pi string) []int64 {
	t.Helper()
	var out []int64
	for _, e := range b.ledger(t, pi) {
		if e.amount < 0 {
			out = append(out, e.amount)
		}
	}
	return out
}

// refundCharge delivers the provider's charge.refunded for pi and waits
// for it to be processed.
func (b *testBundle) refundCharge(t *testing.T, charge, pi string, cumulative int64) {
	t.Helper()
	at := time.Now()
	b.WaitStatus(t, b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload(newID("evt"), charge, pi, cumulative, at), at), "processed")
}

// setupRefusing runs the saga against a fulfillment API that refuses
// every payment, so each one is refunded.
func setupRefusing(t *testing.T) *testBundle {
	t.Helper()
	b := setup(t)
	b.downstream.SetFallback("/fulfill", downstreamstub.Refuse)
	return b
}

// refundedBySaga pays amount for pi and waits for the saga's refund.
func (b *testBundle) refundedBySaga(t *testing.T, pi string, amount int64) {
	t.Helper()
	b.payIntent(t, pi, amount)
	b.waitSaga(t, pi, "refunded")
	b.WaitJobs(t, "stripe_refund")
}

// requireDebits checks pi's debits and that its balance is back to 0.
func (b *testBundle) requireDebits(t *testing.T, pi string, want ...int64) {
	t.Helper()
	require.Equal(t, want, b.debits(t, pi))
	require.Zero(t, b.saga(t, pi).balance)
}

// The saga refunds a payment, then the provider's charge.refunded for the
// same refund arrives: one refund is one debit.
func TestLedgerSagaRefundThenChargeRefundedDebitsOnce(t *testing.T) {
	t.Parallel()
	b := setupRefusing(t)
	pi := newID("pi")
	b.refundedBySaga(t, pi, 2500)
	b.refundCharge(t, newID("ch"), pi, 2500)
	b.requireDebits(t, pi, -2500)
}

// The reverse order: the provider's charge.refunded is booked before the
// saga's refund job books its debit.
func TestLedgerChargeRefundedThenSagaRefundDebitsOnce(t *testing.T) {
	t.Parallel()
	b := setupRefusing(t)
	pi := newID("pi")
	b.refundCharge(t, newID("ch"), pi, 2500)
	b.refundedBySaga(t, pi, 2500)
	b.requireDebits(t, pi, -2500)
}

// A partial refund the provider reported, then the saga's refund of the
// rest, then the provider's report of the whole: each amount is debited once.
func TestLedgerPartialRefundThenSagaRefundReconciles(t *testing.T) {
	t.Parallel()
	b := setupRefusing(t)
	pi, ch := newID("pi"), newID("ch")
	b.refundCharge(t, ch, pi, 500)
	b.refundedBySaga(t, pi, 2500)
	b.refundCharge(t, ch, pi, 2500)
	b.requireDebits(t, pi, -500, -2000)
}

// Both paths wait for the payment intent's ledger lock, here held by the
// test, then book one after the other: one debit, whichever goes first.
func TestLedgerConcurrentRefundPathsDebitOnce(t *testing.T) {
	t.Parallel()
	b := setupRefusing(t)
	ctx := context.Background()
	pi := newID("pi")
	tx, err := b.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "ledger:"+pi)
	require.NoError(t, err)

	b.payIntent(t, pi, 2500)
	at := time.Now()
	refunded := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload(newID("evt"), newID("ch"), pi, 2500, at), at)
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`) == 2
	}, 15*time.Second, 20*time.Millisecond, "the refund job and the charge.refunded delivery never both waited for the ledger lock")
	require.NoError(t, tx.Commit(ctx))

	b.waitSaga(t, pi, "refunded")
	b.WaitStatus(t, refunded, "processed")
	b.requireDebits(t, pi, -2500)
}
