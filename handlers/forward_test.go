package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

func TestForwarderSendsRawPayloadOnceWithDerivedKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.downstream.Script("/forward", downstreamstub.Fail, downstreamstub.ApplyThenHangUp)
	msg := newID("msg")
	at := time.Now()
	payload := append(standardPayload("invoice.paid", "inv_1", at), '\n') // byte for byte, whitespace included
	id := b.deliver(t, "billing", msg, "invoice.paid", payload, at)

	b.waitStatus(t, id, "processed")
	require.Equal(t, map[string]int{"completed": 1}, b.waitJobsFinalized(t, "forward_delivery"))
	reqs := b.downstream.Requests("/forward")
	require.Len(t, reqs, 3, "500, lost response, success")
	key := handlers.DeriveKey("billing", msg, "forward.billing", "forward")
	for _, r := range reqs {
		require.Equal(t, key, r.Key)
		require.Equal(t, msg, r.Header.Get("Webhook-Id"))
		require.Equal(t, payload, r.Body)
	}
	require.Len(t, b.downstream.Effects("/forward"), 1)

	// A replay enqueues no second forward, even once River's job cleaner
	// has deleted the completed job (and with it River's uniqueness).
	_, err := b.pool.Exec(context.Background(), "DELETE FROM river_job WHERE kind = 'forward_delivery'")
	require.NoError(t, err)
	require.Equal(t, "completed", b.waitJobDone(t, b.replay(t, id)))
	require.Empty(t, b.jobStates(t, "forward_delivery"))
	require.Len(t, b.downstream.Requests("/forward"), 3)
}
