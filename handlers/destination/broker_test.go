package destination

import (
	"context"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startNATS runs a NATS server with JetStream on a real port until the
// test ends.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(10*time.Second))
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

func brokerSend() *loadedSend {
	resource := "issue-7"
	return &loadedSend{Source: "github", DeliveryID: "d-1", EventType: "issues", Key: "msg_abc", ResourceKey: &resource,
		Payload: []byte(`{"action":"opened"}`)}
}

// A Kafka destination's message is the delivery's body, keyed by its
// resource, on the topic its template names, with the send's key as
// webhook-id and where it came from in headers.
func TestKafkaPublisherProducesTheDeliveryKeyedByResource(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "hookinbox.github"))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	p, err := newKafkaPublisher(&Kafka{Brokers: cluster.ListenAddrs(), Topic: "hookinbox.{source}"})
	require.NoError(t, err)
	defer p.close()

	send := brokerSend()
	send.stale = true
	m := brokerMessageFor(send, "hookinbox.{source}", false, "application/json", kafkaTopicRune)
	where, err := p.publish(context.Background(), m)
	require.NoError(t, err)
	require.Regexp(t, `^kafka topic hookinbox\.github partition \d offset 0$`, where)

	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("hookinbox.github"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs := cl.PollFetches(ctx).Records()
	require.Len(t, recs, 1)
	r := recs[0]
	require.Equal(t, "issue-7", string(r.Key))
	require.Equal(t, `{"action":"opened"}`, string(r.Value))
	headers := map[string]string{}
	for _, h := range r.Headers {
		headers[h.Key] = string(h.Value)
	}
	require.Equal(t, map[string]string{"webhook-id": "msg_abc", "Content-Type": "application/json", "Hookinbox-Source": "github",
		"Hookinbox-Event": "issues", "Hookinbox-Delivery-Id": "d-1", "Hookinbox-Stale": "true"}, headers)
}

// A topic the cluster does not have is a failed attempt that names it.
func TestKafkaPublisherMissingTopicFails(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	p, err := newKafkaPublisher(&Kafka{Brokers: cluster.ListenAddrs(), Topic: "nowhere"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = p.publish(ctx, brokerMessageFor(brokerSend(), "nowhere", false, "application/json", kafkaTopicRune))
	require.ErrorContains(t, err, "kafka topic nowhere")
}

// JetStream keeps one message per webhook-id inside its duplicate window:
// a send made again lands as a repeat the stream dropped.
func TestNATSPublisherRepeatIsDroppedByTheStream(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	stream, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "HOOKINBOX", Subjects: []string{"hookinbox.>"}})
	require.NoError(t, err)

	p, err := newNATSPublisher(&NATS{URL: url, Subject: "hookinbox.{source}.{event}"})
	require.NoError(t, err)
	defer p.close()
	send := brokerSend()
	send.EventType = "check run.completed"
	m := brokerMessageFor(send, "hookinbox.{source}.{event}", false, "application/json", natsSubjectRune)
	require.Equal(t, "hookinbox.github.check_run.completed", m.target)
	where, err := p.publish(context.Background(), m)
	require.NoError(t, err)
	require.Equal(t, "nats stream HOOKINBOX sequence 1", where)
	where, err = p.publish(context.Background(), m)
	require.NoError(t, err)
	require.Contains(t, where, "a repeat the stream dropped")

	info, err := stream.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs)
	got, err := stream.GetMsg(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, "msg_abc", got.Header.Get("webhook-id"))
	require.Equal(t, "msg_abc", got.Header.Get(jetstream.MsgIDHeader))
	require.Equal(t, `{"action":"opened"}`, string(got.Data))
}

// A subject no stream takes is a failed attempt with a way out, never a
// plain publish nobody keeps.
func TestNATSPublisherSubjectWithoutAStreamFails(t *testing.T) {
	t.Parallel()
	p, err := newNATSPublisher(&NATS{URL: startNATS(t), Subject: "loose.{source}"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = p.publish(ctx, brokerMessageFor(brokerSend(), "loose.{source}", false, "application/json", natsSubjectRune))
	require.ErrorContains(t, err, "nats subject loose.github: no JetStream stream takes this subject")
}
