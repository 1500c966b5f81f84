package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type ledgerEntry struct {
	kind, reference string
	amount          int64
}

func (b *testBundle) ledger(t *testing.T, pi string) []ledgerEntry {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT kind, reference, amount FROM ledger WHERE payment_intent = $1 ORDER BY id", pi)
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
	b.waitStatus(t, first, "processed")
	second := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e2", ch, pi, 1200, t0.Add(time.Minute)), t0.Add(time.Minute))
	b.waitStatus(t, second, "processed")
	want := []ledgerEntry{{"charge_refunded", ch + ":500", -500}, {"charge_refunded", ch + ":1200", -700}}
	require.Equal(t, want, b.ledger(t, pi))

	require.Equal(t, "completed", b.waitJobDone(t, b.replay(t, first)))
	require.Equal(t, "completed", b.waitJobDone(t, b.replay(t, second)))
	require.Equal(t, want, b.ledger(t, pi), "replays book nothing")
}

func TestLedgerChargeRefundedOutOfOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ch, pi := newID("ch"), newID("pi")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	newer := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e2", ch, pi, 1200, t0.Add(time.Minute)), t0.Add(time.Minute))
	b.waitStatus(t, newer, "processed")
	older := b.deliver(t, "stripe", newID("evt"), "charge.refunded", chargeRefundedPayload("e1", ch, pi, 500, t0), t0)
	b.waitStatus(t, older, "processed")
	require.Equal(t, []ledgerEntry{{"charge_refunded", ch + ":1200", -1200}}, b.ledger(t, pi))
}

func TestLedgerPaymentFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pi := newID("pi")
	e1, e2 := newID("evt"), newID("evt")
	id1 := b.deliver(t, "stripe", e1, "payment_intent.payment_failed", paymentFailedPayload(e1, pi, time.Now()), time.Now())
	id2 := b.deliver(t, "stripe", e2, "payment_intent.payment_failed", paymentFailedPayload(e2, pi, time.Now()), time.Now())
	b.waitStatus(t, id1, "processed")
	b.waitStatus(t, id2, "processed")
	require.Equal(t, "completed", b.waitJobDone(t, b.replay(t, id1)))
	require.ElementsMatch(t, []ledgerEntry{{"payment_failed", e1, 0}, {"payment_failed", e2, 0}}, b.ledger(t, pi))
}
