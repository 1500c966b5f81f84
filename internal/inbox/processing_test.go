package inbox_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// A failed attempt marks its own delivery and no other: a pending
// delivery beside it neither shows its error while it retries nor is
// failed when it gives up.
func TestMarkErrorMarksItsDeliveryOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	failing := b.deliver(t, "github", "gh-1", "push", `{"n":1}`)
	bystander := b.deliver(t, "github", "gh-2", "push", `{"n":2}`)
	requireStatus := func(id int64, want string, wantErr *string) {
		t.Helper()
		status, lastError, err := inbox.Status(b.ctx, b.pool, id)
		require.NoError(t, err)
		require.Equal(t, want, status)
		require.Equal(t, wantErr, lastError)
	}

	require.NoError(t, inbox.MarkError(b.ctx, b.pool, inbox.FailedAttempt{InboxID: failing, Error: "retry me", StartedAt: time.Now()}))
	requireStatus(failing, "received", ptr("retry me"))
	requireStatus(bystander, "received", nil)

	require.NoError(t, inbox.MarkError(b.ctx, b.pool, inbox.FailedAttempt{InboxID: failing, Error: "gave up", Final: true,
		StartedAt: time.Now()}))
	requireStatus(failing, "failed", ptr("gave up"))
	requireStatus(bystander, "received", nil)
}
