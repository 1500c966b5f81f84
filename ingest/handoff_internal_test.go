package ingest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// A batch hands on the deliveries it accepts and nothing of the
// duplicates beside them, which would put an older delivery's id back
// after processing took it; a batch that does not commit leaves nothing.
func TestABatchHandsOnWhatItAcceptsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	client, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	in := NewInbox(pool, client)
	in.HandOff = inbox.NewHandOff()
	delivery := func(id string) Delivery {
		return Delivery{Source: "github", DeliveryID: id, EventType: "push", Headers: http.Header{}, Payload: []byte(`{"id":"` + id + `"}`)}
	}
	recs, _, err := in.recordMany(ctx, []Delivery{delivery("first")})
	require.NoError(t, err)
	_, _, ok := in.HandOff.Take(recs[0].ID)
	require.True(t, ok)

	again, _, err := in.recordMany(ctx, []Delivery{delivery("second"), delivery("first")})
	require.NoError(t, err)
	require.Equal(t, OutcomeDuplicate, again[1].Outcome)
	_, _, ok = in.HandOff.Take(recs[0].ID)
	require.False(t, ok, "the duplicate is not handed on")
	_, _, ok = in.HandOff.Take(again[0].ID)
	require.True(t, ok, "the delivery accepted beside it is")

	// A constraint checked at the COMMIT, which travels with the jobs'
	// insert, after the hand-off.
	_, err = pool.Exec(ctx, `CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.inbox_id IN (SELECT id FROM inbox WHERE delivery_id = 'doomed') THEN
			RAISE EXCEPTION 'doomed at its commit'; END IF; RETURN NULL; END $$;
		CREATE CONSTRAINT TRIGGER refuse_doomed AFTER INSERT ON inbox_pending
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_doomed()`)
	require.NoError(t, err)
	_, _, err = in.recordMany(ctx, []Delivery{delivery("doomed")})
	require.ErrorContains(t, err, "doomed at its commit")
	require.Zero(t, in.HandOff.Len(), "a batch that did not commit leaves nothing")
}
