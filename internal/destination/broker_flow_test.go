package destination_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/brokertest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
)

// A broker destination goes through the same outbox as an HTTP one: a
// subject no stream takes is a failed attempt whose error says so, retried
// on the destination's schedule; once a stream takes it the send succeeds
// and the stream holds the delivery once, under the send's key, with
// where it landed recorded as the attempt's answer.
func TestBrokerSendRetriedUntilTheStreamExists(t *testing.T) {
	t.Parallel()
	url := brokertest.NATS(t)

	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		d.URL, d.Secret, d.Headers = "", "", nil
		d.NATS = &config.NATSDestination{URL: url, Subject: "events.{source}.{event}"}
	}})
	id, _ := b.deliver(t, "invoice.paid", "in_1", time.Now())
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM destination_attempt a JOIN destination_send s ON s.id = a.send_id
			WHERE s.delivery_id = $1 AND a.error LIKE '%no JetStream stream takes this subject%'`, id) >= 2
	}, 20*time.Second, 20*time.Millisecond, "log:\n%s", b.log)
	require.Equal(t, "pending", b.waitSend(t, id, "pending"))

	stream := brokertest.Stream(t, url, "EVENTS", "events.>")
	b.waitSend(t, id, "succeeded")

	info, err := stream.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs)
	msg, err := stream.GetMsg(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, "events.billing.invoice.paid", msg.Subject)
	require.Equal(t, destination.Key("billing", id, "app"), msg.Header.Get("webhook-id"))
	var response string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT a.response FROM destination_attempt a
		JOIN destination_send s ON s.id = a.send_id WHERE s.delivery_id = $1 AND a.error IS NULL`, id).Scan(&response))
	require.Equal(t, "nats stream EVENTS sequence 1", response)
}

func TestBrokerDestinationsAreChecked(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		d    config.Destination
		want string
	}{
		{"both brokers", config.Destination{Kafka: &config.KafkaDestination{Brokers: []string{"k:1"}, Topic: "t"}, NATS: &config.NATSDestination{URL: "nats://n:4222", Subject: "s"}}, "a destination is one broker's"},
		{"url too", config.Destination{URL: "http://x", Kafka: &config.KafkaDestination{Brokers: []string{"k:1"}, Topic: "t"}}, "url, tls, secret and headers are an HTTP destination's"},
		{"no brokers", config.Destination{Kafka: &config.KafkaDestination{Topic: "t"}}, "kafka.brokers: at least one"},
		{"bad topic", config.Destination{Kafka: &config.KafkaDestination{Brokers: []string{"k:1"}, Topic: "events/{source}"}}, `kafka.topic: "events/{source}": a topic name holds`},
		{"bad key", config.Destination{Kafka: &config.KafkaDestination{Brokers: []string{"k:1"}, Topic: "t", Key: "id"}}, `kafka.key: "id"`},
		{"http nats url", config.Destination{NATS: &config.NATSDestination{URL: "http://n", Subject: "s"}}, `nats.url: "http://n" is not a nats://`},
		{"nats url with a password", config.Destination{NATS: &config.NATSDestination{URL: "http://u:pa55@n/s3cret", Subject: "s"}}, `nats.url: "http://***@n/***" is not a nats://`},
		{"wildcard subject", config.Destination{NATS: &config.NATSDestination{URL: "nats://n:4222", Subject: "events.>"}}, `nats.subject: "events.>": no spaces`},
		{"empty token", config.Destination{NATS: &config.NATSDestination{URL: "nats://n:4222", Subject: "events..x"}}, `nats.subject: "events..x" is not a subject`},
	}
	for _, tc := range cases {
		tc.d.Name = "b"
		err := validate(tc.d)
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}
