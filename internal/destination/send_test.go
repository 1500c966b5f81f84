package destination_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/jobs"
)

// patient gives the destination a timeout that no request to a live
// loopback receiver reaches, however loaded the machine: a test that counts
// requests must not see a retry it did not script.
func patient(d *config.Destination) { d.Timeout = config.Duration(10 * time.Second) }

// A delivery reaches the destination once: the body byte for byte, signed
// (the receiver verifies with the Standard Webhooks library), with the
// derived key as webhook-id and Idempotency-Key and hookinbox's headers.
func TestSendIsSignedAndCarriesTheDerivedKey(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: patient})
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	id, _ := b.deliver(t, "invoice.paid", "inv_1", at)
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed"))

	reqs := b.recv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	key := destination.Key("billing", id, "app")
	require.True(t, r.Verified)
	require.Equal(t, key, r.WebhookID)
	require.Equal(t, key, r.Header.Get("Idempotency-Key"))
	require.Equal(t, payload("invoice.paid", "inv_1", at), r.Body)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.Equal(t, "Bearer app-token", r.Header.Get("Authorization"))
	require.Equal(t, "billing", r.Header.Get("Hookinbox-Source"))
	require.Equal(t, "invoice.paid", r.Header.Get("Hookinbox-Event"))
	require.Equal(t, id, r.Header.Get("Hookinbox-Delivery-Id"))
	require.Empty(t, r.Header.Get("Hookinbox-Stale"))
	ts, err := strconv.ParseInt(r.Header.Get("Webhook-Timestamp"), 10, 64)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), time.Unix(ts, 0), time.Minute)
	require.Equal(t, map[string]int{key: 1}, b.recv.Effects())
	require.NotContains(t, b.log.String(), "app-token", "header values are never logged")
}

// A delivery's Content-Type is found whatever case its header's name is
// stored in: a Kafka source stores headers as the producer spelled them,
// usually content-type. The receiver gets it, not application/json, and
// a route's filter over a form body reads it at the send as it did when
// the send was recorded.
func TestSendKeepsAContentTypeStoredInLowerCase(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: patient, route: func(r *config.Route) { r.Filter = `body.a == "1"` }})
	id := newID("kafka")
	_, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: "billing", DeliveryID: id, EventType: "form.posted", OccurredAt: time.Now(),
		Headers: http.Header{"content-type": {"application/x-www-form-urlencoded"}}, Payload: []byte("a=1&b=2"),
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed"))
	r := requestOf(t, b.recv, id, "app")
	require.Equal(t, "a=1&b=2", string(r.Body))
	require.Equal(t, "application/x-www-form-urlencoded", r.Header.Get("Content-Type"))
}

// 500s, a timeout and a connection reset are retried with the same key;
// a lost answer (the receiver applied it) is resent with the same key and
// the receiver dedupes it: one effect.
func TestRetriesKeepOneKeyAndOneEffect(t *testing.T) {
	t.Parallel()
	// Only the scripted delay outlasts the timeout, which is generous so
	// that no other request times out on a loaded machine.
	const timeout = 3 * time.Second
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) { d.Timeout = config.Duration(timeout) }})
	b.recv.Script(receiver.Fail, receiver.Action{Delay: 10 * timeout}, receiver.Action{LoseResponse: true},
		receiver.Action{Status: http.StatusBadGateway}, receiver.Apply)
	id, inboxID := b.deliver(t, "invoice.paid", "inv_2", time.Now())
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded", "failed"))

	key := destination.Key("billing", id, "app")
	reqs := b.recv.Requests()
	require.Len(t, reqs, 5, "500, timeout, lost answer, 502, success")
	for _, r := range reqs {
		require.Equal(t, key, r.WebhookID)
	}
	require.Equal(t, map[string]int{key: 1}, b.recv.Effects())
	rows, err := b.pool.Query(context.Background(), "SELECT status FROM destination_attempt ORDER BY attempt")
	require.NoError(t, err)
	statuses, err := pgx.CollectRows(rows, pgx.RowTo[*int])
	require.NoError(t, err)
	var got []int // 0: no answer
	for _, st := range statuses {
		got = append(got, ptrOr(st))
	}
	require.Equal(t, []int{500, 0, 0, 502, 200}, got, "each attempt recorded with its answer")

	// A replay of the delivery sends nothing new and makes nothing due.
	_, err = b.client.Insert(context.Background(), jobs.ProcessDeliveryArgs{InboxID: inboxID}, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND state = 'completed'") == 2
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM destination_send"))
	require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"))
	time.Sleep(200 * time.Millisecond) // several of the sender's polls
	require.Len(t, b.recv.Requests(), 5)
}

func ptrOr(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
