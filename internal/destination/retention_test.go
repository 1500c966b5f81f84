package destination_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/jobs"
)

// Retention never deletes a delivery whose destination work is
// unfinished; once the send is done, the delivery and its send go.
func TestRetentionHoldsUnfinishedSends(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		d.Retry = config.Retry{Schedule: schedule(time.Hour)}
	}})
	ctx := context.Background()
	b.recv.Script(receiver.Fail)
	id, inboxID := b.deliver(t, "invoice.paid", "inv_r", time.Now())
	b.waitAttempts(t, id, 1) // the retry's hour is written before the nudge below
	require.Len(t, b.recv.Requests(), 1)
	require.Equal(t, "pending", b.waitSend(t, id, "pending"))
	_, err := b.pool.Exec(ctx, "UPDATE inbox SET received_at = now() - interval '10 days' WHERE id = $1", inboxID)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, "UPDATE destination_send SET created_at = now() - interval '10 days'")
	require.NoError(t, err)

	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{
		Inbox: map[string]time.Duration{"billing": 3 * 24 * time.Hour}, IdempotencyKeys: time.Hour,
	}, time.Minute, nil)
	res, err := w.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, int64(1), res.InboxHeld)
	require.Zero(t, res.InboxDeleted)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM destination_send"))

	// The operator's nudge: the retry is due now.
	_, err = b.pool.Exec(ctx, "UPDATE destination_send SET next_attempt_at = now() WHERE state = 'pending'")
	require.NoError(t, err)
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"))
	res, err = w.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, int64(1), res.InboxDeleted)
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_send"), "the finished send went with its delivery")
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_attempt"))
}
