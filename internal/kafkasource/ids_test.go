package kafkasource_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/testlog"
)

// A producer's delivery id cannot take a fallback's: an id shaped as an
// offset id (topic/partition/offset), or beginning with "~", is stored
// with a "~" in front, so the message at that offset, which has no id of
// its own, is still a delivery of its own, and a producer's "~…" is not
// the escaped form of another's.
func TestProducerIDsNeverTakeAnOffsetID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	offsetID := topic + "/0/1"
	for i, id := range []string{offsetID, "", "~" + offsetID, "evt-1"} { // offsets 0 to 3 of partition 0
		r := &kgo.Record{Partition: 0, Value: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		if id != "" {
			r.Headers = []kgo.RecordHeader{{Key: "event_id", Value: []byte(id)}}
		}
		require.NoError(t, cl.ProduceSync(context.Background(), r).FirstErr())
	}
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 4 }, 20*time.Second, 50*time.Millisecond)
	rows, err := b.pool.Query(context.Background(), `SELECT delivery_id FROM inbox WHERE source = 'orders' ORDER BY (headers->'Kafka-Offset'->>0)::int`)
	require.NoError(t, err)
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"~" + offsetID, offsetID, "~~" + offsetID, "evt-1"}, stored)
	_, jobs := b.stored(t)
	require.Equal(t, 4, jobs, "each one processed")
	var conflicts int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM delivery_conflict`).Scan(&conflicts))
	require.Zero(t, conflicts)
}

// A message over max_body_bytes is not stored, and stops nothing: it is
// logged with its partition and offset, counted as payload_too_large, and
// its offset is committed with its batch's; the messages around it are
// stored. A batch of nothing but such messages is committed as well.
func TestMessageOverMaxBodyBytesIsSkippedAndTold(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.maxBody = 64
	var logs *testlog.Buffer
	b.logger, logs = testlog.New(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	large := []byte(`"` + strings.Repeat("x", 63) + `"`) // 65 bytes: over the 64 allowed
	// Offsets 0 to 2 of partition 0.
	for i, value := range [][]byte{[]byte(`{"n":0}`), large, []byte(`{"n":2}`)} {
		r := &kgo.Record{Partition: 0, Value: value, Headers: []kgo.RecordHeader{{Key: "event_id", Value: []byte(fmt.Sprint("evt-", i))}}}
		require.NoError(t, cl.ProduceSync(context.Background(), r).FirstErr())
	}
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 3 }, 20*time.Second, 50*time.Millisecond)
	rows, err := b.pool.Query(context.Background(), `SELECT delivery_id FROM inbox WHERE source = 'orders' ORDER BY delivery_id`)
	require.NoError(t, err)
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"evt-0", "evt-2"}, stored)
	require.Contains(t, logs.String(), "kafka message over max_body_bytes not stored")
	require.Contains(t, logs.String(), "partition=0 offset=1 bytes=65 max_body_bytes=64")

	// Alone in its batch.
	r := &kgo.Record{Partition: 1, Value: large}
	require.NoError(t, cl.ProduceSync(context.Background(), r).FirstErr())
	require.Eventually(t, func() bool { return b.committed(t) == 4 }, 20*time.Second, 50*time.Millisecond)
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Equal(t, 2, b.outcomes["payload_too_large"])
	require.Equal(t, 2, b.outcomes["accepted"])
}
