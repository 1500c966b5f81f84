package destination_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A stale event's success moves nothing of what the destination got of
// its resource, its receipt time neither: an event of the newest event
// time, received before the stale one and retried after it, ties with
// nothing newer and is not stale.
func TestAStaleSendMovesNoReceiptTime(t *testing.T) {
	t.Parallel()
	b := setupOrderedOneRetry(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	newest, _ := b.deliver(t, "invoice.updated", "inv_t", base.Add(time.Minute))
	require.Equal(t, "succeeded", b.waitSend(t, newest, "succeeded"))
	b.recv.Script(receiver.Fail, receiver.Fail)
	tied, _ := b.deliver(t, "invoice.updated", "inv_t", base.Add(time.Minute))
	require.Equal(t, "failed", b.waitSend(t, tied, "succeeded", "failed"))
	stale, _ := b.deliver(t, "invoice.updated", "inv_t", base)
	require.Equal(t, "succeeded", b.waitSend(t, stale, "succeeded"))

	require.Equal(t, 1, b.retryFailed(t))
	require.Equal(t, "succeeded", b.waitSend(t, tied, "succeeded"))
	marked := map[string][]string{}
	for _, r := range b.recv.Requests() {
		marked[r.WebhookID] = append(marked[r.WebhookID], r.Header.Get("Hookinbox-Stale"))
	}
	key := func(id string) string { return destination.Key("billing", id, "app") }
	require.Equal(t, map[string][]string{key(newest): {""}, key(tied): {"", "", ""}, key(stale): {"true"}}, marked)
}
