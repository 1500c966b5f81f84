package destination

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A cycle's record and its claim commit together or not at all: when its
// last round trip fails, the outcomes its first recorded are not kept,
// the sends stay claimed as they were, and the connection goes back to
// the pool with no transaction open.
func TestACycleRecordsAndClaimsInOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	s := &Service{cfg: Config{Pool: pool}}
	d := &dest{Destination: Destination{Name: "app", MaxInFlight: 2, Timeout: time.Second}}
	require.NoError(t, s.ensureShared(ctx, d))
	_, err := pool.Exec(ctx, `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		SELECT 'app', 'billing', 'd' || n, n, 'invoice.paid', 'hkb_' || n, false, false, now(), now(), false, 'pending', now()
		FROM generate_series(1, 2) n`)
	require.NoError(t, err)

	_, got, err := s.recordAndClaim(ctx, d, "me", "me/1", nil, 1)
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
	_, _, err = s.recordAndClaim(ctx, d, "me", "me/2", made, 1)
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
	_, got, err = s.recordAndClaim(ctx, d, "me", "me/3", made, 1)
	require.NoError(t, err)
	require.Len(t, got.sends, 1)
	require.NotEqual(t, made[0].send.ID, got.sends[0].ID)
	require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM destination_send WHERE id = $1`, made[0].send.ID).Scan(&state))
	require.Equal(t, "succeeded", state)
}
