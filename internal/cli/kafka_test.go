package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/brokertest"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A new user's Kafka source, end to end: serve reads the topic into the
// inbox, processes each delivery once and forwards it to the user's
// service; a message produced twice under one event id arrives once.
func TestServeReadsAKafkaSourceThroughToADestination(t *testing.T) {
	t.Parallel()
	const topic = "orders.confirmed"
	cluster := brokertest.Kafka(t, 2, topic)

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

// Broker destinations, end to end: a webhook routed to a Kafka topic and
// a NATS JetStream subject arrives on each once, with the send's key as
// webhook-id, however often the provider retries it.
func TestServeRelaysWebhooksToKafkaAndNATS(t *testing.T) {
	t.Parallel()
	cluster := brokertest.Kafka(t, 2, "hookinbox.github")
	natsURL := brokertest.NATS(t)
	stream := brokertest.Stream(t, natsURL, "HOOKINBOX", "hookinbox.>")

	b := setup(t, testdb.URL(t))
	cfg := fmt.Sprintf(`data_dir: %q
shutdown_timeout: 5s
sources:
  - {name: github, provider: github, secrets: [dev-secret]}
destinations:
  - name: events-kafka
    kafka: {brokers: [%q], topic: "hookinbox.{source}"}
  - name: events-nats
    nats: {url: %q, subject: "hookinbox.{source}.{event}"}
routes:
  - {source: github, events: ["*"], to: [events-kafka, events-nats], ordered: true}
`, filepath.Join(filepath.Dir(b.configPath), "data"), cluster.ListenAddrs()[0], natsURL)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
	b.serve(t)

	code, out := b.send(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)
	deliveryID := regexp.MustCompile(`\(delivery ([^)]+)\)`).FindStringSubmatch(out)[1]
	code, out = b.send(t, "--source", "github", "--event", "issues") // the provider's retry
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "(delivery "+deliveryID+")")
	require.Contains(t, out, "200 OK", "a duplicate")

	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("hookinbox.github"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer consumer.Close()
	var recs []*kgo.Record
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		recs = append(recs, consumer.PollFetches(ctx).Records()...)
		return len(recs) >= 1
	}, 30*time.Second, 10*time.Millisecond, "log:\n%s", b.stderr)
	require.Eventually(t, func() bool {
		info, err := stream.Info(context.Background())
		return err == nil && info.State.Msgs >= 1
	}, 30*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	time.Sleep(500 * time.Millisecond) // a second message would have arrived by now
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	recs = append(recs, consumer.PollFetches(ctx).Records()...)
	cancel()

	var seen []string
	for _, r := range recs {
		seen = append(seen, fmt.Sprintf("partition %d offset %d webhook-id %s", r.Partition, r.Offset, kafkaHeader(r, "webhook-id")))
	}
	require.Len(t, recs, 1, "one message for one delivery, retried or not: %v", seen)
	require.Equal(t, destination.Key("github", deliveryID, "events-kafka"), kafkaHeader(recs[0], "webhook-id"))
	require.Equal(t, "issues", kafkaHeader(recs[0], "Hookinbox-Event"))
	info, err := stream.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs)
	msg, err := stream.GetMsg(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, "hookinbox.github.issues", msg.Subject)
	require.Equal(t, destination.Key("github", deliveryID, "events-nats"), msg.Header.Get("webhook-id"))
	require.JSONEq(t, string(recs[0].Value), string(msg.Data), "both carry the delivery's body")
}

func kafkaHeader(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
