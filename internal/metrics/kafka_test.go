package metrics

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestKafkaBatchesCount(t *testing.T) {
	t.Parallel()
	m := New(testdb.New(t), nil)
	m.ObserveKafkaBatch("orders", "orders.confirmed", 1, 40)
	m.ObserveKafkaBatch("orders", "orders.confirmed", 1, 12)
	m.ObserveKafkaLag("orders", "orders.confirmed", 1, 12)
	m.ObserveKafkaLag("orders", "orders.confirmed", 1, 0)
	out := scrape(t, m)
	require.Contains(t, out, `hookinbox_kafka_lag{partition="1",source="orders",topic="orders.confirmed"} 0`+"\n")
	require.Contains(t, out, `hookinbox_kafka_messages_total{source="orders",topic="orders.confirmed"} 52`+"\n")
}
