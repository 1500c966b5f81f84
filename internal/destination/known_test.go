package destination_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// stateOf returns what b's process says of a destination: its state and
// its unfinished sends ("" when it does not list it).
func (b *bundle) stateOf(t *testing.T, name string) (string, int64) {
	t.Helper()
	sts, err := b.svc.Statuses(context.Background())
	require.NoError(t, err)
	for _, st := range sts {
		if st.Name == name {
			return st.State, st.Pending
		}
	}
	return "", 0
}

func (b *bundle) setPaused(t *testing.T, name string, paused bool) {
	t.Helper()
	require.NoError(t, pgx.BeginFunc(context.Background(), b.pool, func(tx pgx.Tx) error {
		return b.svc.SetPausedTx(context.Background(), tx, name, paused)
	}))
}

// A rolling deploy that adds a destination: a replica whose config does
// not have it yet, started and restarted while the new destination has a
// backlog, fails none of its sends and shows it as configured elsewhere;
// the process that has it sends them all.
func TestAReplicaWithAnOlderConfigLeavesANewDestinationsSendsAlone(t *testing.T) {
	t.Parallel()
	goodRecv := receiver.New(t, secret)
	good := config.Destination{Name: "good", URL: goodRecv.URL + "/hooks", Secret: secret, Retry: fast}
	newer := setupWith(t, setupOpts{extra: []config.Destination{good},
		routes: []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"good"}}}})
	newer.setPaused(t, "good", true) // a backlog: its sends wait
	for _, r := range []string{"inv_r1", "inv_r2", "inv_r3"} {
		newer.deliver(t, "invoice.paid", r, time.Now())
	}
	require.Eventually(t, func() bool {
		return newer.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'good' AND state = 'pending'") == 3
	}, 20*time.Second, 10*time.Millisecond)

	older := setupWith(t, setupOpts{pool: newer.pool, recv: newer.recv})
	ctx := context.Background()
	require.NoError(t, older.svc.Stop(ctx)) // restarted mid-backlog
	require.NoError(t, older.svc.Start(ctx))
	state, pending := older.stateOf(t, "good")
	require.Equal(t, destination.StateElsewhere, state)
	require.EqualValues(t, 3, pending)
	require.Zero(t, newer.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'good' AND state = 'failed'"))

	newer.setPaused(t, "good", false)
	require.Eventually(t, func() bool {
		return newer.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'good' AND state = 'succeeded'") == 3
	}, 20*time.Second, 10*time.Millisecond)
	require.Zero(t, newer.count(t, "SELECT count(*) FROM destination_send WHERE state = 'failed'"))
	require.Len(t, goodRecv.Effects(), 3)
}

// A destination no running process has: its sends wait and it is shown as
// unknown, until an operator fails them (AbandonTx), which frees its
// resources' turns. No one can abandon a destination a running process
// has.
func TestAnUnknownDestinationsSendsWaitForAnOperator(t *testing.T) {
	t.Parallel()
	const every = 50 * time.Millisecond
	b := setupWith(t, setupOpts{seen: every})
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              resource_key, event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		VALUES ('old', 'billing', 'gone_1', 1, 'invoice.paid', 'hkb_gone_1', true, false, 'inv_9', now(), now(), false, 'pending', now()),
		       ('old', 'billing', 'gone_2', 2, 'invoice.paid', 'hkb_gone_2', true, false, 'inv_9', now(), now(), false, 'waiting', NULL)`)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `INSERT INTO destination_resource (destination, source, resource_key, busy) VALUES ('old', 'billing', 'inv_9', true)`)
	require.NoError(t, err)
	abandon := func(name string) (int64, error) {
		var n int64
		err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			var err error
			n, err = b.svc.AbandonTx(ctx, tx, name)
			return err
		})
		return n, err
	}

	state, pending := b.stateOf(t, "old")
	require.Equal(t, destination.StateUnknown, state)
	require.EqualValues(t, 2, pending)
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_send WHERE state = 'failed'"), "nothing fails by itself")
	_, err = abandon("app")
	require.ErrorIs(t, err, destination.ErrConfigured, "this process has it")

	// Another process has "old" (paused, so it sends nothing here).
	other := setupWith(t, setupOpts{pool: b.pool, noApp: true, noStart: true, seen: every,
		extra: []config.Destination{{Name: "old", URL: b.recv.URL + "/old"}}})
	other.setPaused(t, "old", true)
	other.start(t)
	state, _ = b.stateOf(t, "old")
	require.Equal(t, destination.StateElsewhere, state)
	_, err = abandon("old")
	require.ErrorIs(t, err, destination.ErrConfigured, "a running process has it")

	require.NoError(t, other.svc.Stop(ctx))
	require.Eventually(t, func() bool {
		state, _ := b.stateOf(t, "old")
		return state == destination.StateUnknown
	}, 10*time.Second, every)
	n, err := abandon("old")
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM destination_send
		WHERE destination = 'old' AND state = 'failed' AND last_error LIKE 'failed by an operator:%'`))
	require.Zero(t, b.count(t, `SELECT count(*) FROM destination_resource WHERE destination = 'old' AND busy`))
	state, _ = b.stateOf(t, "old")
	require.Empty(t, state, "nothing unfinished is left to show")
	_, err = abandon("old")
	require.ErrorIs(t, err, destination.ErrNoSends)
}
