package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// -steady-prefill writes what a run leaves behind, in the service's own
// schema: each delivery stored with its body, processed, about its issue,
// with a completed River job naming it, the newest received last.
func TestPrefill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	issues, err := newIssuePayloads(2048, 4096, benchSecret)
	require.NoError(t, err)
	const n = prefillChunk + 7 // two statements, the second short
	// The ids start just below the newest partition's end: the rows need
	// the next one, which a running service would have made by then.
	var next, top int64
	require.NoError(t, db.QueryRow(ctx, prefillPartitionTopSQL).Scan(&next, &top))
	_, err = db.Exec(ctx, "SELECT setval('inbox_id_seq', $1)", top-10)
	require.NoError(t, err)
	_, err = prefill(ctx, db, "issues", issues, n, func(string, ...any) {})
	require.NoError(t, err)

	count := func(sql string, args ...any) int {
		t.Helper()
		var c int
		require.NoError(t, db.QueryRow(ctx, sql, args...).Scan(&c))
		return c
	}
	require.Equal(t, n, count("SELECT count(*) FROM delivery WHERE source = 'github' AND event_type = 'issues' AND status = 'processed'"))
	require.Equal(t, n, count("SELECT count(DISTINCT delivery_id) FROM inbox"), "a delivery id each")
	require.Equal(t, n, count(`SELECT count(*) FROM river_job j JOIN inbox i ON i.id = (j.args->>'inbox_id')::bigint
		WHERE j.kind = 'process_delivery' AND j.state = 'completed' AND j.finalized_at > i.received_at`), "a completed job each")
	require.Zero(t, count("SELECT count(*) FROM inbox WHERE received_at > now()"))
	require.Zero(t, count("SELECT count(*) FROM inbox_overflow"), "every row in a range partition")
	require.Equal(t, 9, count("SELECT count(*) FROM inbox WHERE id < $1", top), "the first rows in the partition they started in")

	// Delivery g carries issue g mod len(issues), and its resource key.
	for _, g := range []int{1, 2, len(issues) + 3, n} {
		i := g % len(issues)
		repo, number := i%issueRepos, 1+i/issueRepos
		var body []byte
		var key string
		require.NoError(t, db.QueryRow(ctx, `SELECT payload, resource_key FROM delivery WHERE delivery_id = md5('prefill-' || $1::bigint)::uuid::text`, g).
			Scan(&body, &key))
		require.Equal(t, issues[i].body, body, "delivery %d", g)
		require.Equal(t, fmt.Sprintf("%s/service-%02d#%d", issueOwner(repo), repo, number), key, "delivery %d", g)
	}
	var newestIsLast bool
	require.NoError(t, db.QueryRow(ctx, `SELECT delivery_id = md5('prefill-' || $1::bigint)::uuid::text FROM inbox ORDER BY received_at DESC LIMIT 1`, n).
		Scan(&newestIsLast))
	require.True(t, newestIsLast, "the last delivery is the newest")
}
