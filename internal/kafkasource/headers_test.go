package kafkasource_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceHeaders writes one message per header set, each with body.
func (b *bundle) produceHeaders(t *testing.T, body string, sets ...[]kgo.RecordHeader) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	for _, h := range sets {
		require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(body), Headers: h}).FirstErr())
	}
}

// Header names are matched in any case, as HTTP's are: redact_headers
// (configured as "X-Api-Key" and "X-SIGNING-SECRET") and the generic
// credentials are dropped whatever case a producer spells them in.
func TestRedactedHeadersAreDroppedInAnyCase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	secret := []string{"x-api-key", "X-API-KEY", "X-Api-Key", "x-API-kEY", "x-signing-secret", "X-Signing-Secret",
		"X-SIGNING-SECRET", "authorization", "AUTHORIZATION", "proxy-authorization", "COOKIE"}
	var sets [][]kgo.RecordHeader
	for _, name := range secret {
		sets = append(sets, []kgo.RecordHeader{{Key: "event_id", Value: []byte(name)}, {Key: name, Value: []byte("s3cret")},
			{Key: "type", Value: []byte("order.confirmed")}})
	}
	b.produceHeaders(t, `{}`, sets...)
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == int64(len(secret)) }, 20*time.Second, 50*time.Millisecond)
	rows, err := b.pool.Query(context.Background(), `SELECT delivery_id || ' ' || headers::text FROM inbox WHERE source = 'orders'`)
	require.NoError(t, err)
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, stored, len(secret))
	for _, s := range stored {
		require.NotContains(t, s, "s3cret")
	}
}

// The delivery id and event type headers are found in any case: one event
// sent again under "Event_ID" or "EVENT_ID" is a duplicate of the one sent
// under "event_id", never a delivery of its own under its offset.
func TestDeliveryIDAndTypeHeadersMatchInAnyCase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var sets [][]kgo.RecordHeader
	for _, name := range []struct{ id, typ string }{{"event_id", "type"}, {"Event_ID", "Type"}, {"EVENT_ID", "TYPE"}, {"eVENT_iD", "tYPE"}} {
		sets = append(sets, []kgo.RecordHeader{{Key: name.id, Value: []byte("evt-1")}, {Key: name.typ, Value: []byte("order.confirmed")}})
	}
	b.produceHeaders(t, `{"order":"o-1"}`, sets...)
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == int64(len(sets)) }, 20*time.Second, 50*time.Millisecond)
	rows, jobs := b.stored(t)
	require.Equal(t, 1, rows, "one event, sent %d times", len(sets))
	require.Equal(t, 1, jobs)
	var id, eventType string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT delivery_id, event_type FROM inbox WHERE source = 'orders'`).
		Scan(&id, &eventType))
	require.Equal(t, "evt-1", id)
	require.Equal(t, "order.confirmed", eventType)
}

// A stored Kafka delivery keeps its header names as the producer spelled
// them: `deliveries N` shows "event_id", not "Event_id".
func TestHeaderNamesKeepTheirCase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.produceHeaders(t, `{}`, []kgo.RecordHeader{{Key: "event_id", Value: []byte("evt-1")},
		{Key: "traceParent", Value: []byte("00-ab")}, {Key: "type", Value: []byte("order.confirmed")}})
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 1 }, 20*time.Second, 50*time.Millisecond)
	var names []string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT array_agg(k ORDER BY k) FROM inbox, jsonb_object_keys(headers::jsonb) k WHERE source = 'orders'`).Scan(&names))
	require.Subset(t, names, []string{"event_id", "traceParent", "type"})
	require.NotContains(t, names, "Event_id")
}
