package ingest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// What ingest hands on to processing (Inbox.HandOff) is what the inbox
// row holds, headers and payload alike: credentials dropped, and nothing
// for a delivery whose headers the row does not keep byte for byte, or
// for a duplicate.
func TestHandOffHoldsWhatTheRowHolds(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		opts.handOff = inbox.NewHandOff()
		b := setupWith(t, opts)
		body := []byte(`{"action":"opened","issue":{"number":1}}`)
		header := githubHeaders(t, githubSecret, "handoff-1", body)
		header.Set("Authorization", "Bearer from-a-proxy")
		header.Set("Cookie", "session=secret")
		header.Set("X-Custom", "caf\u00e9")
		first := b.post(t, "/webhooks/github", body, header)
		require.Equal(t, http.StatusAccepted, first.status, string(first.raw))

		odd := githubHeaders(t, githubSecret, "handoff-2", body)
		odd.Set("X-Odd", "\xff\xfe")
		second := b.post(t, "/webhooks/github", body, odd)
		require.Equal(t, http.StatusAccepted, second.status, string(second.raw))

		headers, payload, ok := opts.handOff.Take(first.ID)
		require.True(t, ok, "the accepted delivery is handed on")
		rowHeaders, rowPayload := storedRow(t, b, first.ID)
		require.Equal(t, rowHeaders, headers)
		require.Equal(t, rowPayload, payload)
		require.Empty(t, headers.Values("Authorization"))
		require.Empty(t, headers.Values("Cookie"))
		require.Equal(t, "caf\u00e9", headers.Get("X-Custom"))
		again := b.post(t, "/webhooks/github", body, header)
		require.Equal(t, "duplicate", again.Status, string(again.raw))
		_, _, ok = opts.handOff.Take(first.ID)
		require.False(t, ok, "the duplicate hands on nothing")

		_, _, ok = opts.handOff.Take(second.ID)
		require.False(t, ok, "a header the row does not keep as sent is read from the row")
		rowHeaders, _ = storedRow(t, b, second.ID)
		require.Equal(t, "\ufffd\ufffd", rowHeaders.Get("X-Odd"), "what the row keeps of it")
	})
}

// storedRow reads inbox row id's headers and payload as processing does.
func storedRow(t *testing.T, b *testBundle, id int64) (http.Header, []byte) {
	t.Helper()
	rows, err := inbox.LoadPayloads(context.Background(), b.pool, []int64{id})
	require.NoError(t, err)
	var (
		gotID   int64
		headers http.Header
		payload []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&gotID, &headers, &payload}, func() error { return nil })
	require.NoError(t, err)
	require.Equal(t, id, gotID)
	return headers, payload
}
