package destination_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A route's filter decides which deliveries are sent, its transform what
// body: the receiver verifies the Standard Webhooks signature over the
// body it got, under the send's key.
func TestRouteFilterAndTransform(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{route: func(r *config.Route) {
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
	broken := setupWith(t, setupOpts{route: func(r *config.Route) { r.Filter = `body.data.amount > 100` }})
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

	fixed := setupWith(t, setupOpts{pool: broken.pool, recv: broken.recv, route: func(r *config.Route) {
		r.Filter = `has(body.data.amount) ? body.data.amount > 100 : true`
	}})
	require.Equal(t, 1, fixed.retryFailed(t))
	fixed.waitSend(t, id, "succeeded")
	require.Len(t, fixed.recv.Requests(), 1)
}

// waitSendTo waits for the send of a delivery to destination to reach one
// of states, and returns it.
func (b *bundle) waitSendTo(t *testing.T, deliveryID, destination string, states ...string) string {
	t.Helper()
	var state string
	require.Eventually(t, func() bool {
		err := b.pool.QueryRow(context.Background(), "SELECT state FROM destination_send WHERE delivery_id = $1 AND destination = $2",
			deliveryID, destination).Scan(&state)
		return err == nil && slices.Contains(states, state)
	}, 20*time.Second, 10*time.Millisecond, "send of %s to %s never became %v (last %q)", deliveryID, destination, states, state)
	return state
}

// requestOf is the request a receiver got for the send of a delivery to
// a destination.
func requestOf(t *testing.T, recv *receiver.Receiver, deliveryID, to string) receiver.Request {
	t.Helper()
	key := destination.Key("billing", deliveryID, to)
	for _, r := range recv.Requests() {
		if r.WebhookID == key {
			return r
		}
	}
	t.Fatalf("no request for %s to %s", deliveryID, to)
	return receiver.Request{}
}

// Of two routes to one destination that both match, the first in the
// configuration decides: its transform is the body sent, its ordered and
// skip_stale hold for the send. The second decides only where the first's
// events or filter do not match.
func TestTheFirstMatchingRouteDecides(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: patient, route: func(r *config.Route) {
		r.Events = []string{"invoice.*"}
		r.Filter = `body.data.id.startsWith("inv_")`
		r.Transform = `{"route": 0, "id": body.data.id}`
		r.Ordered, r.SkipStale = true, true
	}, routes: []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"app"},
		Transform: `{"route": 1, "id": body.data.id}`}}})
	orderedOf := func(id string) (ordered, skipStale bool) {
		require.NoError(t, b.pool.QueryRow(context.Background(),
			"SELECT ordered, skip_stale FROM destination_send WHERE delivery_id = $1", id).Scan(&ordered, &skipStale))
		return ordered, skipStale
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)

	newer, _ := b.deliver(t, "invoice.updated", "inv_1", base.Add(time.Minute))
	require.Equal(t, "succeeded", b.waitSend(t, newer, "succeeded", "failed", "skipped"))
	require.JSONEq(t, `{"route": 0, "id": "inv_1"}`, string(requestOf(t, b.recv, newer, "app").Body))
	ordered, skipStale := orderedOf(newer)
	require.True(t, ordered, "the first route's ordered")
	require.True(t, skipStale, "the first route's skip_stale")
	older, _ := b.deliver(t, "invoice.updated", "inv_1", base)
	require.Equal(t, "skipped", b.waitSend(t, older, "succeeded", "failed", "skipped"),
		"an older event of the first route's resource is not sent")

	filteredOut, _ := b.deliver(t, "invoice.updated", "cus_1", base) // the first route's filter refuses it
	otherEvent, _ := b.deliver(t, "customer.updated", "inv_2", base) // the first route's events do not match it
	for _, id := range []string{filteredOut, otherEvent} {
		require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed", "skipped"))
		ordered, skipStale := orderedOf(id)
		require.False(t, ordered || skipStale, "the second route is neither ordered nor skip_stale")
	}
	require.JSONEq(t, `{"route": 1, "id": "cus_1"}`, string(requestOf(t, b.recv, filteredOut, "app").Body))
	require.JSONEq(t, `{"route": 1, "id": "inv_2"}`, string(requestOf(t, b.recv, otherEvent, "app").Body))
	require.Len(t, b.recv.Requests(), 3)
}

// A transform is applied without a filter too: the receiver gets its
// body, not the delivery's (the fields it leaves out are not sent), with
// its Content-Type, signed.
func TestATransformWithoutAFilterIsWhatIsSent(t *testing.T) {
	t.Parallel()
	text, list := receiver.New(t, secret), receiver.New(t, secret)
	b := setupWith(t, setupOpts{
		route: func(r *config.Route) { r.Transform = `{"id": body.data.id, "event": event}` },
		extra: []config.Destination{
			{Name: "text", URL: text.URL, Secret: secret, Timeout: config.Duration(10 * time.Second)},
			{Name: "list", URL: list.URL, Secret: secret, Timeout: config.Duration(10 * time.Second)},
		},
		routes: []config.Route{
			{Source: "billing", Events: []string{"*"}, To: []string{"text"}, Transform: `"paid " + body.data.id`},
			{Source: "billing", Events: []string{"*"}, To: []string{"list"}, Transform: `[body.data.id, event]`},
		},
	})
	id, _ := b.deliver(t, "invoice.paid", "in_t", time.Now())
	for _, want := range []struct {
		destination string
		recv        *receiver.Receiver
		body        string
		contentType string
	}{
		{"app", b.recv, `{"event":"invoice.paid","id":"in_t"}`, "application/json"},
		{"text", text, `paid in_t`, "text/plain; charset=utf-8"},
		{"list", list, `["in_t","invoice.paid"]`, "application/json"},
	} {
		require.Equal(t, "succeeded", b.waitSendTo(t, id, want.destination, "succeeded", "failed", "skipped"))
		r := requestOf(t, want.recv, id, want.destination)
		require.Equal(t, want.body, string(r.Body), want.destination)
		require.Equal(t, want.contentType, r.Header.Get("Content-Type"), want.destination)
		require.True(t, r.Verified, "%s: the signature covers the body sent", want.destination)
	}
}

// A transform that fails to evaluate when the send is made, with or
// without a filter (a missing field, a value of another type, its cost
// limit), is visible as a filter's failure is: the send is recorded
// failed with the error, nothing is sent, and the log says so. Once the
// routes are fixed, an operator's retry sends the fixed transform's body.
func TestATransformErrorIsAFailedSendRetriedAfterTheFix(t *testing.T) {
	t.Parallel()
	typed, costly := receiver.New(t, secret), receiver.New(t, secret)
	dests := []config.Destination{
		{Name: "typed", URL: typed.URL, Secret: secret, Timeout: config.Duration(10 * time.Second)},
		{Name: "costly", URL: costly.URL, Secret: secret, Timeout: config.Duration(10 * time.Second)},
	}
	broken := setupWith(t, setupOpts{
		route: func(r *config.Route) {
			r.Filter = `body.type == "invoice.paid"`
			r.Transform = `{"amount": body.data.amount}`
		},
		extra: dests,
		routes: []config.Route{
			{Source: "billing", Events: []string{"*"}, To: []string{"typed"}, Transform: `has(body.data.amount) ? body.data.amount : 0`},
			{Source: "billing", Events: []string{"*"}, To: []string{"costly"}, Transform: `{"text": body.type + " " + body.data.id}`, CostLimit: 2},
		},
	})
	id, _ := broken.deliver(t, "invoice.paid", "in_x", time.Now())
	for name, want := range map[string]string{
		"app":    "routes[0] (billing): transform: no such key: amount",
		"typed":  "routes[1] (billing): transform: yielded int",
		"costly": "routes[2] (billing): transform: operation cancelled: actual cost limit exceeded",
	} {
		require.Equal(t, "failed", broken.waitSendTo(t, id, name, "succeeded", "failed", "skipped"), name)
		var lastError string
		require.NoError(t, broken.pool.QueryRow(context.Background(),
			"SELECT last_error FROM destination_send WHERE delivery_id = $1 AND destination = $2", id, name).Scan(&lastError))
		require.Contains(t, lastError, want, name)
		require.Contains(t, broken.log.String(), want, "%s: the log says so", name)
	}
	for _, recv := range []*receiver.Receiver{broken.recv, typed, costly} {
		require.Empty(t, recv.Requests())
	}
	ctx := context.Background()
	require.NoError(t, broken.svc.Stop(ctx))

	fixed := setupWith(t, setupOpts{pool: broken.pool, recv: broken.recv,
		route: func(r *config.Route) {
			r.Filter = `body.type == "invoice.paid"`
			r.Transform = `{"amount": has(body.data.amount) ? body.data.amount : 0.0}`
		},
		extra: dests,
		routes: []config.Route{
			{Source: "billing", Events: []string{"*"}, To: []string{"typed"}, Transform: `has(body.data.amount) ? string(body.data.amount) : "none"`},
			{Source: "billing", Events: []string{"*"}, To: []string{"costly"}, Transform: `{"text": body.type + " " + body.data.id}`},
		},
	})
	for _, want := range []struct {
		destination string
		recv        *receiver.Receiver
		body        string
	}{
		{"app", fixed.recv, `{"amount":0}`},
		{"typed", typed, `none`},
		{"costly", costly, `{"text":"invoice.paid in_x"}`},
	} {
		var retried int
		require.NoError(t, pgx.BeginFunc(ctx, fixed.pool, func(tx pgx.Tx) (err error) {
			retried, err = fixed.svc.RetryFailedTx(ctx, tx, want.destination, time.Now().Add(-time.Hour))
			return err
		}))
		require.Equal(t, 1, retried, want.destination)
		require.Equal(t, "succeeded", fixed.waitSendTo(t, id, want.destination, "succeeded", "failed", "skipped"), want.destination)
		require.Equal(t, want.body, string(requestOf(t, want.recv, id, want.destination).Body), want.destination)
	}
}

// A transform whose body would be over the route's max_output_bytes is a
// failed send naming the limit: the destination gets nothing, not a part.
func TestRouteOverItsOutputLimitIsAFailedSend(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{route: func(r *config.Route) {
		r.Transform = `{"lines": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(i, {"n": i, "id": body.data.id, "type": body.type})}`
		r.MaxOutputBytes = 128
	}})
	id, _ := b.deliver(t, "invoice.paid", "in_3", time.Now())
	b.waitSend(t, id, "failed")
	var lastError string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		"SELECT last_error FROM destination_send WHERE delivery_id = $1", id).Scan(&lastError))
	require.Contains(t, lastError, "routes[0] (billing): transform: a value it reads, builds or yields is over max_output_bytes (128 bytes)")
	require.Empty(t, b.recv.Requests())
}
