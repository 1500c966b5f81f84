package cli

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/brokertest"
)

// produceTo writes n messages to each partition of topic.
func produceTo(t *testing.T, brokers []string, topic string, partitions int32, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for p := range partitions {
		for i := range n {
			r := &kgo.Record{Partition: p, Value: fmt.Appendf(nil, `{"order":"%d-%d"}`, p, i)}
			require.NoError(t, cl.ProduceSync(context.Background(), r).FirstErr())
		}
	}
}

// committed is the sum of group's committed offsets: the messages it
// will not be given again.
func committed(t *testing.T, brokers []string, group string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		return 0 // no member has joined yet
	}
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) { sum += max(o.At, 0) })
	return sum
}

// storedLag is the source's stored lag: its rows and their sum.
func storedLag(t *testing.T, pool *pgxpool.Pool, source string) (rows int, lag int64) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*), coalesce(sum(lag), 0) FROM kafka_lag WHERE source = $1`, source).Scan(&rows, &lag))
	return rows, lag
}

// A Kafka source whose consumers are stuck (the inbox refuses their
// writes) falls behind: its lag, read from the broker and stored by the
// two replicas, rises, and opens a kafka_lag alert once, naming the lag
// and the topic. Once the inbox takes writes again the consumers catch
// up, and that resolves it, once.
func TestServeAlertsOnceWhenAKafkaSourceFallsBehind(t *testing.T) {
	t.Parallel()
	const topic = "orders.confirmed"
	cluster := brokertest.Kafka(t, 2, topic)
	chat := newChatReceiver(t)
	orders := fmt.Sprintf("{name: orders, kafka: {brokers: [%q], topics: [%s], start: earliest, lag_every: 1s}}",
		cluster.ListenAddrs()[0], topic)
	b, pool := serveReplicas(t, alertsConfig(chat, "kafka_lag: {source: orders, over: 3, for: 2s}", orders), Extensions{})
	ctx := context.Background()
	// Each partition has a committed offset before the stall, so that a
	// reading has both, rebalancing or not.
	produceTo(t, cluster.ListenAddrs(), topic, 2, 1)
	require.Eventually(t, func() bool { return committed(t, cluster.ListenAddrs(), "hookinbox-orders") == 2 },
		30*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	_, err := pool.Exec(ctx, `CREATE FUNCTION refuse_orders() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'inbox unavailable'; END $$;
		CREATE TRIGGER refuse_orders BEFORE INSERT ON inbox FOR EACH ROW WHEN (NEW.source = 'orders')
		EXECUTE FUNCTION refuse_orders();`)
	require.NoError(t, err)
	unstick := sync.OnceFunc(func() {
		_, err := pool.Exec(ctx, `DROP TRIGGER refuse_orders ON inbox`)
		require.NoError(t, err)
	})
	// A replica stuck on its batch holds up the other's leaving the group:
	// the inbox takes writes again before they stop.
	t.Cleanup(unstick)
	produceTo(t, cluster.ListenAddrs(), topic, 2, 5)

	openedThenResolved(t, b, pool, chat, "kafka_lag orders", "Kafka source orders is 10 messages behind on orders.confirmed (over 3)",
		unstick)
	rows, lag := storedLag(t, pool, "orders")
	require.Equal(t, [2]int64{2, 0}, [2]int64{int64(rows), lag}, "caught up")
	var stored int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE source = 'orders'`).Scan(&stored))
	require.Equal(t, 12, stored)
}
