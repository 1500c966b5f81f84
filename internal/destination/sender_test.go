package destination_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
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
		WITH send AS (
		    INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                                  event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		    VALUES ('app', 'billing', 'orphan', $1, 'invoice.paid', 'hkb_orphan', false, false, now(), now(), false, 'pending', now())
		    RETURNING id
		)
		UPDATE destination_slot SET send_id = send.id, holder = 'dead/1', claimed_until = now() + interval '700 milliseconds'
		FROM send
		WHERE destination = 'app' AND slot = (SELECT max(slot) FROM destination_slot WHERE destination = 'app')`, inboxID)
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
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT attempts, EXISTS (SELECT 1 FROM destination_slot WHERE send_id = s.id AND claimed_until > now()), state
		FROM destination_send s WHERE delivery_id = $1`, id).
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

// A claim made while other requests are in flight takes only sends no
// slot holds: each send is made once, however the claims interleave.
func TestEverySendOnceWhileOthersAreInFlight(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		d.MaxInFlight, d.RateLimit, d.Timeout = 4, 0, config.Duration(10*time.Second)
	}})
	b.recv.SetFallback(receiver.Action{Delay: 200 * time.Millisecond})
	var ids []string
	for i := range 12 {
		id, _ := b.deliver(t, "invoice.paid", fmt.Sprintf("inv_once%d", i), time.Now())
		ids = append(ids, id)
		time.Sleep(40 * time.Millisecond) // claims start while earlier requests run
	}
	for _, id := range ids {
		b.waitSend(t, id, "succeeded")
	}
	made := map[string]int{}
	for _, r := range b.recv.Requests() {
		made[r.WebhookID]++
	}
	require.Len(t, made, len(ids))
	for key, n := range made {
		require.Equal(t, 1, n, "requests with webhook-id %s", key)
	}
	require.Equal(t, 4, b.recv.MaxInFlight(), "requests overlapped, so claims ran while others were in flight")
}
