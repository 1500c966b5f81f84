package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A new user's Kafka source, end to end: serve reads the topic into the
// inbox, processes each delivery once and forwards it to the user's
// service; a message produced twice under one event id arrives once.
func TestServeReadsAKafkaSourceThroughToADestination(t *testing.T) {
	t.Parallel()
	const topic = "orders.confirmed"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)

	var (
		mu  sync.Mutex
		got = map[string][]string{} // webhook-id → bodies
	)
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.Header.Get("webhook-id")] = append(got[r.Header.Get("webhook-id")], string(body))
		mu.Unlock()
	}))
	t.Cleanup(service.Close)

	url := testdb.URL(t)
	b := setup(t, url)
	cfg := fmt.Sprintf(`data_dir: %q
shutdown_timeout: 5s
sources:
  - name: orders
    forward_url: %q
    kafka:
      brokers: [%q]
      topics: [%s]
      delivery_id: "header:event_id"
      event_type: "header:type"
      start: earliest
`, filepath.Join(filepath.Dir(b.configPath), "data"), service.URL+"/events", cluster.ListenAddrs()[0], topic)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
	b.serve(t)

	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer producer.Close()
	for _, id := range []string{"e1", "e2", "e3", "e4", "e2"} {
		r := &kgo.Record{Key: []byte("order-" + id), Value: []byte(`{"order":"` + id + `"}`), Headers: []kgo.RecordHeader{
			{Key: "event_id", Value: []byte(id)}, {Key: "type", Value: []byte("order.confirmed")}}}
		require.NoError(t, producer.ProduceSync(context.Background(), r).FirstErr())
	}

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 4
	}, 30*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	time.Sleep(500 * time.Millisecond) // a second send of e2 would have arrived by now
	mu.Lock()
	for id, bodies := range got {
		require.Len(t, bodies, 1, "webhook-id %s sent once", id)
	}
	mu.Unlock()

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	var rows int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM inbox WHERE source = 'orders' AND origin = 'kafka' AND event_type = 'order.confirmed'`).Scan(&rows))
	require.Equal(t, 4, rows)

	code, out := b.send(t, "--source", "orders", "--event", "order.confirmed")
	require.Equal(t, 1, code)
	require.Contains(t, out, `source "orders" reads Kafka topic(s) orders.confirmed: produce a message to them instead`)
}
