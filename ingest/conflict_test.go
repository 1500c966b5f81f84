package ingest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A conflicting request sent again and again (a replayed capture, or a
// sender's retries) is one delivery_conflict row per source, delivery id
// and body, which counts the copies: the table cannot grow with them.
func TestRepeatedConflictIsOneRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := githubBody(1)
	require.Equal(t, http.StatusAccepted, b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-c", body)).status)
	other := githubBody(2)
	h := githubHeaders(t, githubSecret, "gh-c", other)
	for range 3 {
		r := b.post(t, "/webhooks/github", other, h)
		require.Equal(t, http.StatusConflict, r.status, "%s", r.raw)
	}
	third := githubBody(3)
	require.Equal(t, http.StatusConflict, b.post(t, "/webhooks/github", third, githubHeaders(t, githubSecret, "gh-c", third)).status)

	rows, err := b.pool.Query(context.Background(),
		"SELECT convert_from(body, 'UTF8'), copies, last_received_at IS NOT NULL FROM delivery_conflict WHERE source = 'github' AND delivery_id = 'gh-c' ORDER BY id")
	require.NoError(t, err)
	type row struct {
		body   string
		copies int64
		last   bool
	}
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.body, &r.copies, &r.last))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []row{{string(other), 3, true}, {string(third), 1, false}}, got, "one row per conflicting body, counting its copies")
}
