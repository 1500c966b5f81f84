package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

// An ordered destination's turn row that a send takes while retention's
// delete waits for its lock is kept: the delete reads the row anew, not
// only as its subquery saw it (idle for 40 days).
func TestRetentionKeepsATurnTakenWhileItWaits(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `INSERT INTO destination_resource (destination, source, resource_key, busy, updated_at)
		VALUES ('app', 'github', 'acme/webshop#1', false, now() - interval '40 days')`)
	require.NoError(t, err)
	turn, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = turn.Rollback(ctx) }()
	_, err = turn.Exec(ctx, `UPDATE destination_resource SET busy = true, updated_at = now() WHERE resource_key = 'acme/webshop#1'`)
	require.NoError(t, err)

	logger, _ := testlog.New(t)
	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{Inbox: map[string]time.Duration{"github": 30 * day}}, time.Minute, logger)
	done := make(chan error, 1)
	go func() {
		_, err := w.Run(ctx, b.now)
		done <- err
	}()
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
		return waiting == 1
	}, 10*time.Second, 10*time.Millisecond, "retention never waited for the turn's row")
	require.NoError(t, turn.Commit(ctx))
	require.NoError(t, <-done)

	var busy int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM destination_resource WHERE busy`).Scan(&busy))
	require.Equal(t, 1, busy, "the turn taken is kept")
}
