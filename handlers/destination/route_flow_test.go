package destination_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers/destination"
)

// A route's filter decides which deliveries are sent, its transform what
// body: the receiver verifies the Standard Webhooks signature over the
// body it got, under the send's key.
func TestRouteFilterAndTransform(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{route: func(r *destination.Route) {
		// headers are read at send time too: the claim loads them.
		r.Filter = `body.type == "invoice.paid" && body.data.id.startsWith("in_") && headers["content-type"] == "application/json"`
		r.Transform = `{"text": "paid " + body.data.id, "delivery": delivery_id}`
	}})
	paid, _ := b.deliver(t, "invoice.paid", "in_1", time.Now())
	other, _ := b.deliver(t, "invoice.paid", "cus_1", time.Now())
	b.waitSend(t, paid, "succeeded")
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM destination_send WHERE delivery_id = $1", other),
		"a delivery the filter refuses records nothing")

	reqs := b.recv.Requests()
	require.Len(t, reqs, 1)
	require.True(t, reqs[0].Verified, "the signature covers the body sent")
	require.Equal(t, destination.Key("billing", paid, "app"), reqs[0].WebhookID)
	require.JSONEq(t, `{"text":"paid in_1","delivery":"`+paid+`"}`, string(reqs[0].Body))
	require.Equal(t, "application/json", reqs[0].Header.Get("Content-Type"))
}

// A filter that fails to evaluate is visible, never taken for "filtered
// out": the send is recorded failed with the error and nothing is sent.
// Once the route is fixed (a process with the new configuration), an
// operator's retry sends it.
func TestRouteErrorIsAFailedSendRetriedAfterTheFix(t *testing.T) {
	t.Parallel()
	broken := setupWith(t, setupOpts{route: func(r *destination.Route) { r.Filter = `body.data.amount > 100` }})
	id, _ := broken.deliver(t, "invoice.paid", "in_2", time.Now())
	broken.waitSend(t, id, "failed")
	var lastError string
	require.NoError(t, broken.pool.QueryRow(context.Background(),
		"SELECT last_error FROM destination_send WHERE delivery_id = $1", id).Scan(&lastError))
	require.Contains(t, lastError, "routes[0] (billing): filter: no such key: amount")
	require.Empty(t, broken.recv.Requests())
	// The fixed configuration replaces the broken one, as a deploy does.
	ctx := context.Background()
	require.NoError(t, broken.svc.Stop(ctx))

	fixed := setupWith(t, setupOpts{pool: broken.pool, recv: broken.recv, route: func(r *destination.Route) {
		r.Filter = `has(body.data.amount) ? body.data.amount > 100 : true`
	}})
	require.Equal(t, 1, fixed.retryFailed(t))
	fixed.waitSend(t, id, "succeeded")
	require.Len(t, fixed.recv.Requests(), 1)
}
