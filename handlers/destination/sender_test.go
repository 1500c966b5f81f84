package destination_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A send claimed by a sender that died (its claim still live) is not
// made until the claim expires; then any sender makes it, with its key.
func TestExpiredClaimIsMadeAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id, _ := b.deliver(t, "invoice.paid", "inv_dead", time.Now())
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"))

	// A second delivery's send, as a sender that died mid-request left it.
	_, inboxID := b.deliver(t, "invoice.paid", "inv_dead2", time.Now())
	_, err := b.pool.Exec(ctx, `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              event_at, event_received_at, at_is_receipt, state, next_attempt_at, claimed_by, claimed_until)
		VALUES ('app', 'billing', 'orphan', $1, 'invoice.paid', 'hkb_orphan', false, false, now(), now(), false, 'pending',
		        now(), 'dead/1', now() + interval '700 milliseconds')`, inboxID)
	require.NoError(t, err)
	inserted := time.Now()
	require.Equal(t, "succeeded", b.waitSend(t, "orphan", "succeeded"))
	var orphan []receiver.Request
	for _, r := range b.recv.Requests() {
		if r.WebhookID == "hkb_orphan" {
			orphan = append(orphan, r)
		}
	}
	require.Len(t, orphan, 1)
	require.GreaterOrEqual(t, orphan[0].At.Sub(inserted), 600*time.Millisecond, "not before the claim expired")
}

// Stop lets requests in flight end within its context; one still running
// is cut short and left, with no attempt spent, to the next sender, which
// makes it with the same key.
func TestStopLeavesACutRequestToTheNextSender(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.recv.Script(receiver.Action{Delay: 3 * time.Second})
	id, _ := b.deliver(t, "invoice.paid", "inv_cut", time.Now())
	require.Eventually(t, func() bool { return len(b.recv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)

	stopCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.svc.Stop(stopCtx), context.DeadlineExceeded)
	var (
		attempts int
		claimed  bool
		state    string
	)
	require.NoError(t, b.pool.QueryRow(ctx, "SELECT attempts, claimed_by IS NOT NULL, state FROM destination_send WHERE delivery_id = $1", id).
		Scan(&attempts, &claimed, &state))
	require.Equal(t, "pending", state)
	require.Zero(t, attempts, "a cut request spends no attempt")
	require.False(t, claimed, "its claim is released at once, not left to expire")

	require.NoError(t, b.svc.Start(ctx))
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"))
	key := destination.Key("billing", id, "app")
	for _, r := range b.recv.Requests() {
		require.Equal(t, key, r.WebhookID)
	}
}
