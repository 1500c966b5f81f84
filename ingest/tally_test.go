package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// minuteCounts is ingest_minute as "source/outcome" → count.
func minuteCounts(t *testing.T, b *testBundle) map[string]int {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT source || '/' || outcome, sum(count)::int FROM ingest_minute GROUP BY 1")
	require.NoError(t, err)
	out := map[string]int{}
	for rows.Next() {
		var (
			k string
			n int
		)
		require.NoError(t, rows.Scan(&k, &n))
		out[k] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// Every request's outcome is counted per source and minute, 4xx
// included, outside the inbox; counts add up across flushes (and
// replicas), and a flush that fails keeps its counts for the next.
func TestTallyCountsEveryOutcome(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	tally := ingest.NewTally(pool, ingest.TallyConfig{FlushEvery: time.Hour})
	t.Cleanup(func() { _ = tally.Close(context.Background()) })
	b := setupWith(t, setupOpts{pool: pool, observe: func(source, outcome string, _ time.Duration) {
		tally.Add(source, outcome, time.Now())
	}})
	body := githubBody(70)
	h := githubHeaders(t, githubSecret, "gh-tally", body)
	b.post(t, "/webhooks/github", body, h)
	b.post(t, "/webhooks/github", body, h)
	b.post(t, "/webhooks/github", body, githubHeaders(t, "wrong", "gh-tally-2", body))
	b.post(t, "/webhooks/nobody", body, h)
	require.NoError(t, tally.Flush(context.Background()))
	require.Equal(t, map[string]int{"github/accepted": 1, "github/duplicate": 1, "github/invalid_signature": 1,
		"_unknown/unknown_source": 1}, minuteCounts(t, b))
	require.Equal(t, counts{1, 1}, b.counts(t), "the 4xx wrote nothing to the inbox")

	ctx := context.Background()
	_, err := pool.Exec(ctx, "ALTER TABLE ingest_minute RENAME TO ingest_minute_away")
	require.NoError(t, err)
	b.post(t, "/webhooks/github", body, h)
	require.Error(t, tally.Flush(ctx))
	_, err = pool.Exec(ctx, "ALTER TABLE ingest_minute_away RENAME TO ingest_minute")
	require.NoError(t, err)
	b.post(t, "/webhooks/github", body, h)
	require.NoError(t, tally.Close(ctx), "the last counts are written on close")
	require.Equal(t, 3, minuteCounts(t, b)["github/duplicate"])
}
