package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

// A finished destination send lives as long as its source's deliveries:
// each source's retention deletes its own sends, never another source's
// kept longer or deleted sooner.
func TestRetentionOfFinishedSendsFollowsTheirSource(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key,
			ordered, skip_stale, event_at, event_received_at, at_is_receipt, state, created_at)
		SELECT 'app', s.source, s.id, s.n, 'push', 'k' || s.n, false, false, now(), now(), true, 'succeeded',
		       now() - s.age * interval '1 day'
		FROM (VALUES ('github', 'gh-40d', 1, 40), ('github', 'gh-10d', 2, 10),
		             ('stripe', 'st-10d', 3, 10), ('stripe', 'st-5d', 4, 5)) s(source, id, n, age)`)
	require.NoError(t, err)

	logger, _ := testlog.New(t)
	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{
		Inbox:           map[string]time.Duration{"github": 30 * day, "stripe": 7 * day},
		IdempotencyKeys: 7 * day,
		BatchSize:       10,
		Pause:           time.Millisecond,
	}, time.Minute, logger)
	_, err = w.Run(ctx, b.now)
	require.NoError(t, err)
	var kept []string
	require.NoError(t, b.pool.QueryRow(ctx, "SELECT array_agg(delivery_id ORDER BY delivery_id) FROM destination_send").Scan(&kept))
	require.Equal(t, []string{"gh-10d", "st-5d"}, kept)
}
