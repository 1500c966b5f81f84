package destination

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hookinbox/hookinbox/internal/brokertest"
	"github.com/hookinbox/hookinbox/internal/config"
)

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
	cluster := brokertest.Kafka(t, 3, "hookinbox.github")
	p, err := newKafkaPublisher(&config.KafkaDestination{Brokers: cluster.ListenAddrs(), Topic: "hookinbox.{source}"})
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
	cluster := brokertest.Kafka(t, 1)
	p, err := newKafkaPublisher(&config.KafkaDestination{Brokers: cluster.ListenAddrs(), Topic: "nowhere"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = p.publish(ctx, brokerMessageFor(brokerSend(), "nowhere", false, "application/json", kafkaTopicRune))
	require.ErrorContains(t, err, "kafka topic nowhere")
}

// A Kafka destination produces with acks from every in-sync replica and
// idempotently, on a cluster of three brokers: a send the leader stored
// but could not replicate in time (NOT_ENOUGH_REPLICAS_AFTER_APPEND) is
// not recorded succeeded on the leader's word, and the retry that follows
// is dropped by the broker as the producer's repeat, never stored twice.
func TestKafkaPublisherWaitsForReplicasAndRetriesIdempotently(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "events"))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	var mu sync.Mutex
	var acks []int16
	var producers []int64
	cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Count: -1, Observe: true, When: func(req kmsg.Request) bool {
		p := req.(*kmsg.ProduceRequest)
		mu.Lock()
		defer mu.Unlock()
		acks = append(acks, p.Acks)
		for _, rt := range p.Topics {
			for _, rp := range rt.Partitions {
				var b kmsg.RecordBatch
				if b.ReadFrom(rp.Records) == nil {
					producers = append(producers, b.ProducerID)
				}
			}
		}
		return true
	}})
	notReplicated := cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "events", Err: kerr.NotEnoughReplicasAfterAppend})

	p, err := newKafkaPublisher(&config.KafkaDestination{Brokers: cluster.ListenAddrs(), Topic: "events"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.publish(ctx, brokerMessageFor(brokerSend(), "events", false, "application/json", kafkaTopicRune))
	require.NoError(t, err)
	require.Equal(t, 1, notReplicated.Hits(), "the first produce was stored but not replicated")

	var stored int64
	for _, pi := range cluster.PartitionInfos("events") {
		stored += pi.HighWatermark
	}
	require.Equal(t, int64(1), stored, "the retry was dropped as the producer's repeat")
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(acks), 2, "produced, then retried")
	for i := range acks {
		require.Equal(t, int16(-1), acks[i], "produce %d: acks from every in-sync replica", i)
	}
	for i := range producers {
		require.GreaterOrEqual(t, producers[i], int64(0), "produce %d: idempotent, under a producer id", i)
	}
}

// A produce the in-sync replicas never take is a failed attempt once the
// attempt's time is up, never a send recorded succeeded.
func TestKafkaPublisherSendNoReplicaTakesFails(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "events"))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	refused := cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "events", Err: kerr.NotEnoughReplicas, Count: -1})

	p, err := newKafkaPublisher(&config.KafkaDestination{Brokers: cluster.ListenAddrs(), Topic: "events"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	where, err := p.publish(ctx, brokerMessageFor(brokerSend(), "events", false, "application/json", kafkaTopicRune))
	require.ErrorContains(t, err, "kafka topic events", "recorded at %q", where)
	require.Positive(t, refused.Hits())
}

// JetStream keeps one message per webhook-id inside its duplicate window:
// a send made again lands as a repeat the stream dropped.
func TestNATSPublisherRepeatIsDroppedByTheStream(t *testing.T) {
	t.Parallel()
	url := brokertest.NATS(t)
	stream := brokertest.Stream(t, url, "HOOKINBOX", "hookinbox.>")

	p, err := newNATSPublisher(&config.NATSDestination{URL: url, Subject: "hookinbox.{source}.{event}"})
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
	p, err := newNATSPublisher(&config.NATSDestination{URL: brokertest.NATS(t), Subject: "loose.{source}"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = p.publish(ctx, brokerMessageFor(brokerSend(), "loose.{source}", false, "application/json", natsSubjectRune))
	require.ErrorContains(t, err, "nats subject loose.github: no JetStream stream takes this subject")
}

// A publish the stream refuses for a reason of its own (here a full
// stream that discards new messages) is a failed attempt naming it,
// never a send recorded succeeded that the stream never kept.
func TestNATSPublisherRefusedByAFullStreamFails(t *testing.T) {
	t.Parallel()
	url := brokertest.NATS(t)
	stream := brokertest.StreamOf(t, url, jetstream.StreamConfig{Name: "FULL", Subjects: []string{"full.>"},
		MaxMsgs: 1, Discard: jetstream.DiscardNew})
	p, err := newNATSPublisher(&config.NATSDestination{URL: url, Subject: "full.{source}"})
	require.NoError(t, err)
	defer p.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	first := brokerSend()
	_, err = p.publish(ctx, brokerMessageFor(first, "full.{source}", false, "application/json", natsSubjectRune))
	require.NoError(t, err)
	second := brokerSend()
	second.Key = "msg_def" // another send: not a repeat the stream would drop
	where, err := p.publish(ctx, brokerMessageFor(second, "full.{source}", false, "application/json", natsSubjectRune))
	require.ErrorContains(t, err, "nats subject full.github: ", "recorded at %q", where)
	require.ErrorContains(t, err, "maximum messages exceeded")

	info, err := stream.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs, "the stream kept the first send only")
}
