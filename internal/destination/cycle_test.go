package destination

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A cycle's record and its claim commit together or not at all: when its
// last round trip fails, the outcomes its first recorded are not kept,
// the sends stay claimed as they were, and the connection goes back to
// the pool with no transaction open.
func TestACycleRecordsAndClaimsInOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := &dest{Destination: config.Destination{Name: "app", MaxInFlight: 2, Timeout: config.Duration(time.Second)}}
	s, pool := setupCycle(t, d, 2)

	_, got, err := s.recordAndClaim(ctx, d, "me", "me/1", nil, 1, false)
	require.NoError(t, err)
	require.Len(t, got.sends, 1)
	made := []result{{send: got.sends[0], res: response{at: time.Now(), status: 200}}}

	// Claims fail from now on; a slot's release does not.
	_, err = pool.Exec(ctx, `
		CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'claims refused'; END $$;
		CREATE TRIGGER refuse_claims BEFORE UPDATE ON destination_slot
			FOR EACH ROW WHEN (NEW.send_id IS NOT NULL) EXECUTE FUNCTION refuse_claims()`)
	require.NoError(t, err)
	conns := pool.Stat().NewConnsCount()
	_, _, err = s.recordAndClaim(ctx, d, "me", "me/2", made, 1, false)
	require.ErrorContains(t, err, "claims refused")

	var (
		state    string
		attempts int
		holder   string
	)
	require.NoError(t, pool.QueryRow(ctx, `SELECT s.state, (SELECT count(*) FROM destination_attempt), sl.holder
		FROM destination_send s JOIN destination_slot sl ON sl.send_id = s.id WHERE s.id = $1`, made[0].send.ID).
		Scan(&state, &attempts, &holder))
	require.Equal(t, "pending", state, "the outcome is not kept without the claim")
	require.Zero(t, attempts)
	require.Equal(t, "me/1", holder, "the send is still claimed as it was")
	require.Zero(t, pool.Stat().AcquiredConns())

	_, err = pool.Exec(ctx, `DROP TRIGGER refuse_claims ON destination_slot`)
	require.NoError(t, err)
	_, got, err = s.recordAndClaim(ctx, d, "me", "me/3", made, 1, false)
	require.NoError(t, err)
	require.Len(t, got.sends, 1)
	require.NotEqual(t, made[0].send.ID, got.sends[0].ID)
	require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM destination_send WHERE id = $1`, made[0].send.ID).Scan(&state))
	require.Equal(t, "succeeded", state)
	require.Equal(t, conns, pool.Stat().NewConnsCount(), "the failed cycle's connection was rolled back and pooled, not closed")
}

// A record tried again after a failure that may have come after its
// commit adds nothing the first try kept: no attempt twice, no failure
// counted twice. When the first try was not kept, it records them all.
// A send filtered out at its request tells the circuit nothing.
func TestARecordTriedAgainAddsNothingTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, s, pool, got := setupRecording(t)
	failed := func(l *loadedSend) []result {
		return []result{{send: l, res: response{at: time.Now(), took: time.Millisecond, status: 500}}}
	}
	counts := func() (attempts, failures int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM destination_attempt),
			(SELECT consecutive_failures FROM destination_state WHERE destination = 'app')`).Scan(&attempts, &failures))
		return attempts, failures
	}

	first := failed(got.sends[0])
	_, _, err := s.recordAndClaim(ctx, d, "me", "me/2", first, 0, false)
	require.NoError(t, err)
	attempts, failures := counts()
	require.Equal(t, []int{1, 1}, []int{attempts, failures})
	_, _, err = s.recordAndClaim(ctx, d, "me", "me/3", first, 0, true)
	require.NoError(t, err)
	attempts, failures = counts()
	require.Equal(t, []int{1, 1}, []int{attempts, failures}, "the first try was kept")

	_, _, err = s.recordAndClaim(ctx, d, "me", "me/4", failed(got.sends[1]), 0, true)
	require.NoError(t, err)
	attempts, failures = counts()
	require.Equal(t, []int{2, 2}, []int{attempts, failures}, "no earlier try was kept")

	_, _, err = s.recordAndClaim(ctx, d, "me", "me/5", []result{{send: got.sends[2], filtered: true}}, 0, false)
	require.NoError(t, err)
	attempts, failures = counts()
	require.Equal(t, []int{2, 2}, []int{attempts, failures}, "no request, nothing for the circuit")
}

// The circuit counts a flush's failures that ended after its last
// success, and only those: the success resets the count the failures
// before it made.
func TestAFlushCountsTheFailuresAfterItsLastSuccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, s, pool, got := setupRecording(t)
	at := time.Now()
	made := []result{
		{send: got.sends[0], res: response{at: at.Add(-time.Second), took: time.Millisecond, status: 500}},
		{send: got.sends[1], res: response{at: at, took: time.Millisecond, status: 200}},
		{send: got.sends[2], res: response{at: at.Add(time.Second), took: time.Millisecond, status: 500}},
	}
	_, _, err := s.recordAndClaim(ctx, d, "me", "me/2", made, 0, false)
	require.NoError(t, err)
	var failures int
	require.NoError(t, pool.QueryRow(ctx, `SELECT consecutive_failures FROM destination_state WHERE destination = 'app'`).Scan(&failures))
	require.Equal(t, 1, failures, "the failure after the success, not the one before")
}

// setupRecording is a destination of three slots whose circuit opens at
// its tenth failure, with its three pending sends claimed.
func setupRecording(t *testing.T) (*dest, *Service, *pgxpool.Pool, claimResult) {
	t.Helper()
	d := &dest{Destination: config.Destination{Name: "app", MaxInFlight: 3, Timeout: config.Duration(time.Second),
		Retry:   config.Retry{Schedule: []config.Duration{config.Duration(time.Minute)}, MaxAge: config.Duration(time.Hour)},
		Circuit: config.Circuit{Failures: 10, ProbeEvery: config.Duration(time.Second)}}}
	s, pool := setupCycle(t, d, 3)
	_, got, err := s.recordAndClaim(context.Background(), d, "me", "me/1", nil, 3, false)
	require.NoError(t, err)
	require.Len(t, got.sends, 3)
	return d, s, pool, got
}

// A rate-limited claim writes the rate slots it took in its own
// transaction, under the state row's lock: written after its commit,
// another replica's claim could take the same slots meanwhile.
func TestARateLimitedClaimTakesItsSlotsInItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := &dest{Destination: config.Destination{Name: "app", MaxInFlight: 4, Timeout: config.Duration(time.Second), RateLimit: 10}}
	s, pool := setupCycle(t, d, 3)

	_, got, err := s.recordAndClaim(ctx, d, "me", "me/1", nil, 4, false)
	require.NoError(t, err)
	require.Len(t, got.sends, 3)
	var (
		together bool
		ahead    time.Duration
	)
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT (SELECT xmin FROM destination_state WHERE destination = 'app')::text
		           = ALL (SELECT xmin::text FROM destination_slot WHERE destination = 'app' AND holder = 'me/1'),
		       (SELECT next_send_at - clock_timestamp() FROM destination_state WHERE destination = 'app')`).
		Scan(&together, &ahead))
	require.True(t, together, "the slots and the rate slots were written by one transaction")
	require.Positive(t, ahead, "the rate slots of three sends at 10/s lie ahead")
}

// A cycle is one transaction of two round trips, its BEGIN travelling in
// the first and its COMMIT in the last, or of three when its claim may
// take rate slots; the connection goes back to the pool without another.
func TestACycleIsTwoRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, tc := range map[string]struct {
		rateLimit float64
		trips     int
	}{"unlimited": {0, 2}, "rate-limited": {100, 3}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := &dest{Destination: config.Destination{Name: "app", MaxInFlight: 2, Timeout: config.Duration(time.Second), RateLimit: tc.rateLimit}}
			pool, trips := testdb.NewCounted(t)
			s := setupCycleOn(t, pool, d, 4)
			_, got, err := s.recordAndClaim(ctx, d, "me", "me/1", nil, 1, false) // prepares the statements
			require.NoError(t, err)
			require.Len(t, got.sends, 1)
			made := []result{{send: got.sends[0], res: response{at: time.Now(), status: 200}}}

			trips.Reset()
			_, got, err = s.recordAndClaim(ctx, d, "me", "me/2", made, 1, false)
			require.NoError(t, err)
			require.Len(t, got.sends, 1)
			sent := trips.Sent()
			require.Equal(t, tc.trips, len(sent), "round trips:\n%s", trips)
			require.Equal(t, "BEGIN", sent[0][0])
			last := sent[len(sent)-1]
			require.Equal(t, "COMMIT", last[len(last)-1])
			require.Zero(t, pool.Stat().AcquiredConns())
		})
	}
}

// setupCycle is a Service for d on a database of its own, with n pending
// sends of d (delivery ids d1…dn), oldest first.
func setupCycle(t *testing.T, d *dest, n int) (*Service, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.New(t)
	return setupCycleOn(t, pool, d, n), pool
}

// setupCycleOn is setupCycle on pool.
func setupCycleOn(t *testing.T, pool *pgxpool.Pool, d *dest, n int) *Service {
	t.Helper()
	ctx := context.Background()
	s := &Service{cfg: Config{Pool: pool}}
	require.NoError(t, s.ensureShared(ctx, d))
	_, err := pool.Exec(ctx, `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		SELECT $1, 'billing', 'd' || n, n, 'invoice.paid', 'hkb_' || n, false, false, now(), now(), false, 'pending', now()
		FROM generate_series(1, $2::int) n`, d.Name, n)
	require.NoError(t, err)
	return s
}
