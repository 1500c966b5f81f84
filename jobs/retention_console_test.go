package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/jobs"
)

// The console's tables have retention of their own: per-minute ingest
// counts live two days, conflict records RetentionConfig.Conflicts.
func TestRetentionOfConsoleTables(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `INSERT INTO ingest_minute (minute, source, outcome, count)
		VALUES ($1, 'github', 'accepted', 1), ($2, 'github', 'accepted', 2)`,
		b.now.Add(-jobs.IngestMinuteRetention-time.Minute), b.now.Add(-time.Hour))
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `INSERT INTO delivery_conflict (source, delivery_id, received_at, payload_sha256, headers, body, body_size)
		VALUES ('github', 'old', $1, '\x00', '{}', 'a', 1), ('github', 'new', $2, '\x00', '{}', 'b', 1)`,
		b.now.Add(-8*day), b.now.Add(-6*day))
	require.NoError(t, err)

	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{Inbox: map[string]time.Duration{"github": 30 * day}, IdempotencyKeys: day}, time.Minute, nil)
	res, err := w.Run(ctx, b.now)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.ConflictsDeleted)
	var left string
	require.NoError(t, b.pool.QueryRow(ctx, "SELECT string_agg(delivery_id, ',') FROM delivery_conflict").Scan(&left))
	require.Equal(t, "new", left, "kept for 7 days by default")
	var kept []int
	rows, err := b.pool.Query(ctx, "SELECT count::int FROM ingest_minute ORDER BY minute")
	require.NoError(t, err)
	for rows.Next() {
		var n int
		require.NoError(t, rows.Scan(&n))
		kept = append(kept, n)
	}
	require.Equal(t, []int{2}, kept)
}
