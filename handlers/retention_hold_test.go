package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/jobs"
)

// Retention keeps a processed delivery while a follow-up job it enqueued
// is still retrying (it needs the row's payload and keys), and deletes it
// once that job is done.
func TestRetentionHoldsADeliveryWhoseForwardStillRetries(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{maxAttempts: 10_000})
	ctx := context.Background()
	b.downstream.SetFallback("/forward", downstreamstub.Fail)
	msg := newID("msg")
	id := b.deliver(t, "billing", msg, "invoice.paid", standardPayload("invoice.paid", "inv_hold", time.Now()), time.Now())
	b.waitStatus(t, id, "processed")
	require.Eventually(t, func() bool { return len(b.downstream.Requests("/forward")) >= 2 }, 15*time.Second, 20*time.Millisecond)

	_, err := b.pool.Exec(ctx, `UPDATE inbox SET received_at = now() - interval '10 days' WHERE id = $1;`, id)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `UPDATE handler_step SET created_at = now() - interval '10 days' WHERE delivery_id = $1`, msg)
	require.NoError(t, err)
	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{
		Inbox: map[string]time.Duration{"billing": 3 * 24 * time.Hour}, IdempotencyKeys: time.Hour,
	}, time.Minute, nil)
	res, err := w.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, jobs.RetentionResult{InboxHeld: 1}, res, "held while its forward retries")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox WHERE id = $1", id))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM handler_step WHERE delivery_id = $1", msg),
		"the step that stops a replay from forwarding again is kept too")

	b.downstream.SetFallback("/forward", downstreamstub.Apply)
	require.Equal(t, map[string]int{"completed": 1}, b.waitJobsFinalized(t, "forward_delivery"))
	res, err = w.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, int64(1), res.InboxDeleted, "deleted once its forward is done")
	require.Zero(t, res.InboxHeld)
	require.Len(t, b.downstream.Effects("/forward"), 1)
}
