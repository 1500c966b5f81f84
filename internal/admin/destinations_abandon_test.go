package admin_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// A destination no running process has is listed as unknown with its
// unfinished sends, and only an operator's abandon fails them: once, under
// the Idempotency-Key contract. A configured destination cannot be
// abandoned.
func TestAbandonAnUnknownDestination(t *testing.T) {
	t.Parallel()
	b, _ := setupDestinations(t)
	_, err := b.pool.Exec(context.Background(), `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		VALUES ('gone', 'billing', 'g1', 1, 'invoice.paid', 'hkb_g1', false, false, now(), now(), false, 'pending', now())`)
	require.NoError(t, err)

	var gone *destination.Status
	for _, st := range b.destinations(t) {
		if st.Name == "gone" {
			gone = &st
		}
	}
	require.NotNil(t, gone, "listed beside the configured ones")
	require.Equal(t, destination.StateUnknown, gone.State)
	require.EqualValues(t, 1, gone.Pending)

	r := b.do(t, http.MethodPost, "/admin/destinations/app/abandon", "", map[string]string{"Idempotency-Key": "ab-app"})
	require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
	require.Equal(t, "destination_configured", r.errorCode(t))
	r = b.do(t, http.MethodPost, "/admin/destinations/nosuch/abandon", "", map[string]string{"Idempotency-Key": "ab-nosuch"})
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)

	for range 2 { // the same key: the same answer, done once
		r = b.do(t, http.MethodPost, "/admin/destinations/gone/abandon", "", map[string]string{"Idempotency-Key": "ab-gone"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.JSONEq(t, `{"name":"gone","failed":1}`, string(r.body))
	}
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'gone' AND state = 'failed'"))
	for _, st := range b.destinations(t) {
		require.NotEqual(t, "gone", st.Name, "nothing unfinished is left to show")
	}
}
