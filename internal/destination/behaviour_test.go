package destination_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A 429 whose Retry-After asks for longer than the schedule is honoured.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: patient})
	b.recv.Script(receiver.Action{Status: http.StatusTooManyRequests, RetryAfter: "2"})
	id, _ := b.deliver(t, "invoice.paid", "inv_3", time.Now())
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed"))
	reqs := b.recv.Requests()
	require.Len(t, reqs, 2)
	require.GreaterOrEqual(t, reqs[1].At.Sub(reqs[0].At), 1900*time.Millisecond, "waited for Retry-After, not the 50ms schedule")
}

// A Retry-After beyond retry.max_age is cut to what remains of it: the
// send is tried once more as the window closes, not failed on its first
// attempt.
func TestRetryAfterBeyondMaxAgeGetsOneMoreTry(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		patient(d)
		d.Retry = config.Retry{Schedule: schedule(20 * time.Millisecond), MaxAge: config.Duration(time.Second)}
	}})
	b.recv.Script(receiver.Action{Status: http.StatusTooManyRequests, RetryAfter: "3600"})
	id, _ := b.deliver(t, "invoice.paid", "inv_ra", time.Now())
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed"))
	reqs := b.recv.Requests()
	require.Len(t, reqs, 2)
	require.Less(t, reqs[1].At.Sub(reqs[0].At), 1500*time.Millisecond, "at the window's end, not Retry-After's")
}

// When the schedule runs out the send fails, visibly; an operator's retry
// sends it again with the same key.
func TestExhaustedSendFailsAndAnOperatorRetries(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		d.Retry = config.Retry{Schedule: schedule(20*time.Millisecond, 20*time.Millisecond)}
		d.Circuit.Failures = 100
	}})
	b.recv.SetFallback(receiver.Fail)
	id, _ := b.deliver(t, "invoice.paid", "inv_4", time.Now())
	require.Equal(t, "failed", b.waitSend(t, id, "succeeded", "failed"))
	require.Len(t, b.recv.Requests(), 3, "the first request and two retries")
	var lastErr string
	require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT last_error FROM destination_send WHERE delivery_id = $1", id).Scan(&lastErr))
	require.Contains(t, lastErr, "HTTP 500")

	b.recv.SetFallback(receiver.Apply)
	require.Equal(t, 1, b.retryFailed(t))
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"))
	key := destination.Key("billing", id, "app")
	for _, r := range b.recv.Requests() {
		require.Equal(t, key, r.WebhookID)
	}
	require.Equal(t, map[string]int{key: 1}, b.recv.Effects())
}

// After circuit.failures consecutive failures the destination is open:
// only a probe every probe_every is sent. The first success closes it and
// the waiting sends go; nothing is dropped.
func TestCircuitOpensProbesAndCloses(t *testing.T) {
	t.Parallel()
	const probeEvery = 700 * time.Millisecond
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		d.Circuit = config.Circuit{Failures: 3, ProbeEvery: config.Duration(probeEvery)}
		d.Retry = config.Retry{Schedule: schedule(20*time.Millisecond, 20*time.Millisecond,
			20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond,
			20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond)}
	}})
	b.recv.SetFallback(receiver.Fail)
	var ids []string
	for i := range 5 {
		id, _ := b.deliver(t, "invoice.paid", "inv_c"+string(rune('a'+i)), time.Now())
		ids = append(ids, id)
	}
	var failing destination.Status
	require.Eventually(t, func() bool {
		sts, err := b.svc.Statuses(context.Background())
		if err != nil {
			return false
		}
		failing = sts[0]
		return sts[0].State == "open"
	}, 10*time.Second, 10*time.Millisecond)
	require.NotNil(t, failing.LastError, "the failure's error is current while open")
	require.Contains(t, *failing.LastError, "HTTP 500")
	require.NotNil(t, failing.LastErrorAt)
	// While open, only probes go. Their claims are probe_every apart on
	// the database's clock; each request starts after its claim by however
	// long a loaded machine takes, so the gap is held to half of it. A
	// circuit that did not hold would send every 20 ms.
	var probes []time.Time
	require.Eventually(t, func() bool {
		rows, err := b.pool.Query(context.Background(), `SELECT attempted_at FROM destination_attempt WHERE probe ORDER BY attempted_at`)
		if err != nil {
			return false
		}
		probes, err = pgx.CollectRows(rows, pgx.RowTo[time.Time])
		return err == nil && len(probes) >= 2
	}, 20*time.Second, 20*time.Millisecond, "two probes while open")
	for i := 1; i < len(probes); i++ {
		require.GreaterOrEqual(t, probes[i].Sub(probes[i-1]), probeEvery/2, "one probe per probe_every")
	}
	require.Zero(t, b.count(t, `SELECT count(*) FROM destination_attempt WHERE NOT probe AND attempted_at > $1`, probes[0]),
		"only probes while open")

	b.recv.SetFallback(receiver.Apply)
	for _, id := range ids {
		require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed"))
	}
	sts, err := b.svc.Statuses(context.Background())
	require.NoError(t, err)
	require.Equal(t, "active", sts[0].State)
	require.Nil(t, sts[0].FailingSince)
	// Recovered: no error is shown as current, and the last one keeps
	// its time for whoever asks when the outage was.
	require.Nil(t, sts[0].LastError, "a recovered destination shows no current error")
	require.NotNil(t, sts[0].LastErrorAt)
	require.False(t, sts[0].LastErrorAt.Before(*failing.LastErrorAt))
	require.Less(t, time.Since(*sts[0].LastErrorAt), time.Minute)
	require.Equal(t, 1, strings.Count(b.log.String(), "destination: circuit closed"), "the close is logged, once:\n%s", b.log)
	require.Len(t, b.recv.Effects(), 5)
}

// A paused destination holds its sends; resuming sends them.
func TestPauseHoldsAndResumeSends(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return b.svc.SetPausedTx(ctx, tx, "app", true) }))
	id, _ := b.deliver(t, "invoice.paid", "inv_5", time.Now())
	require.Equal(t, "pending", b.waitSend(t, id, "pending"))
	time.Sleep(300 * time.Millisecond) // several of the sender's polls
	require.Equal(t, "pending", b.waitSend(t, id, "pending"), "the send waits")
	require.Empty(t, b.recv.Requests())
	sts, err := b.svc.Statuses(ctx)
	require.NoError(t, err)
	require.Equal(t, "paused", sts[0].State)
	require.EqualValues(t, 1, sts[0].Pending)

	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return b.svc.SetPausedTx(ctx, tx, "app", false) }))
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"), "sent on resume")
}

// A resume only flips the destination's state, whatever the backlog: it
// writes none of the sends it releases, so it takes no longer for a large
// one. Every send the pause held is then made.
func TestResumeOfALargeBacklogSendsEverySend(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) { d.MaxInFlight = 50 }})
	ctx := context.Background()
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error { return b.svc.SetPausedTx(ctx, tx, "app", true) }))
	_, inboxID := b.deliver(t, "invoice.paid", "inv_big", time.Now())
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE state = 'pending'") == 1
	}, 10*time.Second, 10*time.Millisecond)
	// 1,199 more sends of the same delivery's payload, as a long pause
	// leaves them (many of the sender's claims).
	_, err := b.pool.Exec(ctx, `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		SELECT 'app', 'billing', 'held_' || g, $1, 'invoice.paid', 'hkb_held_' || g, false, false, now(), now(), false, 'pending', now()
		FROM generate_series(1, 1199) g`, inboxID)
	require.NoError(t, err)

	var written int
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if err := b.svc.SetPausedTx(ctx, tx, "app", false); err != nil {
			return err
		}
		// A row's xmin is the transaction that last wrote it.
		return tx.QueryRow(ctx, `SELECT count(*) FROM destination_send WHERE xmin::text::bigint = txid_current() % 4294967296`).
			Scan(&written)
	}))
	require.Zero(t, written, "sends the resume itself wrote")
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE state = 'succeeded'") == 1200
	}, 60*time.Second, 50*time.Millisecond)
	require.Len(t, b.recv.Effects(), 1200)
}

// A success after a failure resets the failure count, but only a circuit
// that was open wakes the waiting sends: a send retrying on its schedule
// (or its Retry-After) keeps its time.
func TestSuccessDoesNotWakeRetriesOfAClosedCircuit(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		patient(d)
		d.Retry = config.Retry{Schedule: schedule(time.Minute)}
	}})
	b.recv.Script(receiver.Fail)
	failing, _ := b.deliver(t, "invoice.paid", "inv_w1", time.Now())
	require.Eventually(t, func() bool { return len(b.recv.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "pending", b.waitSend(t, failing, "pending"))

	ok, _ := b.deliver(t, "invoice.paid", "inv_w2", time.Now())
	require.Equal(t, "succeeded", b.waitSend(t, ok, "succeeded"))
	time.Sleep(500 * time.Millisecond) // ten of the sender's polls
	require.Equal(t, "pending", b.waitSend(t, failing, "pending"))
	require.Len(t, b.recv.Requests(), 2, "the failed send waits for its retry's time")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM destination_send WHERE next_attempt_at > now() + interval '30 seconds'"))
}
