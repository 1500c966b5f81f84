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
// once is still retrying (it needs the row and its keys), with the step
// that stops a replay from enqueueing it again, and deletes them once that
// job is done.
func TestRetentionHoldsADeliveryWhoseFollowUpStillRetries(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{maxAttempts: 10_000})
	ctx := context.Background()
	b.downstream.SetFallback("/fulfill", downstreamstub.Fail)
	id := newID("evt")
	inboxID := b.deliver(t, "stripe", id, "payment_intent.succeeded", paymentSucceededPayload(id, "pi_"+id, 2500, time.Now()), time.Now())
	b.WaitStatus(t, inboxID, "processed")
	require.Eventually(t, func() bool { return len(b.downstream.Requests("/fulfill")) >= 2 }, 15*time.Second, 20*time.Millisecond)

	_, err := b.Pool.Exec(ctx, `UPDATE inbox SET received_at = now() - interval '10 days' WHERE id = $1`, inboxID)
	require.NoError(t, err)
	_, err = b.Pool.Exec(ctx, `UPDATE handler_step SET created_at = now() - interval '10 days' WHERE delivery_id = $1`, id)
	require.NoError(t, err)
	w := jobs.NewRetentionWorker(b.Pool, jobs.RetentionConfig{
		Inbox: map[string]time.Duration{"stripe": 3 * 24 * time.Hour}, IdempotencyKeys: time.Hour,
	}, time.Minute, nil)
	res, err := w.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, jobs.RetentionResult{InboxHeld: 1}, res, "held while its fulfillment retries")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox WHERE id = $1", inboxID))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM handler_step WHERE delivery_id = $1", id),
		"the step that stops a replay from fulfilling again is kept too")

	b.downstream.SetFallback("/fulfill", downstreamstub.Apply)
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "stripe_fulfill"))
	res, err = w.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, int64(1), res.InboxDeleted, "deleted once its fulfillment is done")
	require.Zero(t, res.InboxHeld)
	require.Len(t, b.downstream.Effects("/fulfill"), 1)
}
