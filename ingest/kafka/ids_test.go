package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
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
