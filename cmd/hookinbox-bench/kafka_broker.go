package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The kafka scenario's broker side: franz-go's kfake cluster, the
// pre-filled source topic, the bare producer and the destination topic's
// audit.

// kafkaBroker is a one-broker kfake cluster on a loopback port, inside
// the bench process, and an admin client of it. It holds every message in
// memory (about 1.5 GB for three topics of 100,000 issues bodies).
type kafkaBroker struct {
	cluster *kfake.Cluster
	addr    string
	client  *kgo.Client
	admin   *kadm.Client
}

func startKafkaBroker(partitions int) (*kafkaBroker, error) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.SeedTopics(int32(partitions), kafkaSourceTopic, kafkaDestTopic, kafkaBareTopic))
	if err != nil {
		return nil, fmt.Errorf("kfake: %w", err)
	}
	addrs := cluster.ListenAddrs()
	client, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		cluster.Close()
		return nil, err
	}
	return &kafkaBroker{cluster: cluster, addr: addrs[0], client: client, admin: kadm.NewClient(client)}, nil
}

func (b *kafkaBroker) close() {
	b.client.Close()
	b.cluster.Close()
}

// kafkaMessage is one message of the source topic: an issues body, keyed
// by the issue as a producer keeps one resource's events in order.
type kafkaMessage struct {
	body []byte
	key  []byte // the issue's node_id: the resource hookinbox reads too (resource_field)
}

// kafkaMessages pairs each issues body with its issue's node_id.
func kafkaMessages(issues []payload) ([]kafkaMessage, error) {
	out := make([]kafkaMessage, len(issues))
	for i, p := range issues {
		id, err := issueNodeID(p.body)
		if err != nil {
			return nil, err
		}
		out[i] = kafkaMessage{body: p.body, key: []byte(id)}
	}
	return out, nil
}

// issueNodeID is an issues event's issue.node_id.
func issueNodeID(body []byte) (string, error) {
	var ev struct {
		Issue struct {
			NodeID string `json:"node_id"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return "", err
	}
	if ev.Issue.NodeID == "" {
		return "", errors.New("issues body without issue.node_id")
	}
	return ev.Issue.NodeID, nil
}

// kafkaEventID is message i's event_id header: unique per message, so
// each is a delivery of its own.
func kafkaEventID(i int) string { return "evt-" + strconv.Itoa(i) }

// kafkaPrefill is the source topic's filling, before serve starts.
type kafkaPrefill struct {
	Messages int64   `json:"messages"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	PerSec   float64 `json:"messages_per_sec"`
	CPU      cpuUse  `json:"cpu"`
}

// prefill produces n messages to the source topic, batched (franz-go's
// default linger), each with a unique event_id header and type "issues".
func (b *kafkaBroker) prefill(ctx context.Context, msgs []kafkaMessage, n int) (kafkaPrefill, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DefaultProduceTopic(kafkaSourceTopic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(20_000))
	if err != nil {
		return kafkaPrefill{}, err
	}
	defer cl.Close()
	var (
		p       kafkaPrefill
		failed  atomic.Pointer[error]
		started = time.Now()
	)
	for i := range n {
		m := msgs[i%len(msgs)]
		r := &kgo.Record{Key: m.key, Value: m.body, Headers: []kgo.RecordHeader{
			{Key: "event_id", Value: []byte(kafkaEventID(i))}, {Key: "type", Value: []byte("issues")}}}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
		p.Bytes += int64(len(m.body))
	}
	if err := cl.Flush(ctx); err != nil {
		return p, err
	}
	if e := failed.Load(); e != nil {
		return p, fmt.Errorf("prefill: %w", *e)
	}
	p.Messages, p.Seconds = int64(n), time.Since(started).Seconds()
	p.PerSec = perSec(p.Messages, p.Seconds)
	return p, nil
}

// committed is the sum of the group's committed offsets on the source
// topic: the messages it will not be given again (0 before the group
// exists).
func (b *kafkaBroker) committed(ctx context.Context) (int64, error) {
	offsets, err := b.admin.FetchOffsets(ctx, kafkaGroup)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Topic == kafkaSourceTopic {
			sum += max(o.At, 0)
		}
	})
	return sum, nil
}

// kafkaBare is the bare producer's run: what franz-go and the broker
// take at the destination's concurrency, with nothing recorded.
type kafkaBare struct {
	Goroutines int       `json:"goroutines"`
	Messages   int64     `json:"messages"`
	Errors     int64     `json:"errors"`
	Seconds    float64   `json:"seconds"`
	PerSec     float64   `json:"messages_per_sec"`
	Latency    latencies `json:"produce_latency"`
	CPU        cpuUse    `json:"cpu"`
}

// bareProducer produces n messages to the bare topic from conc
// goroutines, each waiting for its message's acknowledgement before the
// next (ProduceSync), through one client set as a Kafka destination's
// is (idempotent, acks from every in-sync replica, no linger), with the
// bodies, keys and headers a destination's messages carry.
func (b *kafkaBroker) bareProducer(ctx context.Context, msgs []kafkaMessage, n, conc int) (kafkaBare, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	if err != nil {
		return kafkaBare{}, err
	}
	defer cl.Close()
	var (
		next   atomic.Int64
		errs   atomic.Int64
		mu     sync.Mutex
		lat    []time.Duration
		wg     sync.WaitGroup
		start  = time.Now()
		source = []byte(kafkaSource)
	)
	for range conc {
		wg.Go(func() {
			var mine []time.Duration
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				m := msgs[i%len(msgs)]
				r := &kgo.Record{Topic: kafkaBareTopic, Key: m.key, Value: m.body, Headers: []kgo.RecordHeader{
					{Key: "webhook-id", Value: []byte("hkb_bare_" + strconv.Itoa(i))},
					{Key: "Content-Type", Value: []byte("application/json")},
					{Key: "Hookinbox-Source", Value: source}, {Key: "Hookinbox-Event", Value: []byte("issues")},
					{Key: "Hookinbox-Delivery-Id", Value: []byte(kafkaEventID(i))},
				}}
				sent := time.Now()
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					errs.Add(1)
					continue
				}
				mine = append(mine, time.Since(sent))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return kafkaBare{}, err
	}
	res := kafkaBare{Goroutines: conc, Messages: int64(len(lat)), Errors: errs.Load(), Seconds: time.Since(start).Seconds()}
	res.PerSec, res.Latency = perSec(res.Messages, res.Seconds), percentiles(lat)
	return res, nil
}

// topicAudit counts a topic's messages by their webhook-id header.
type topicAudit struct {
	Records  int64 `json:"records"`
	Distinct int64 `json:"distinct_webhook_ids"`
	// Repeated is how many webhook-ids came more than once: legal after a
	// retry of a send the broker had taken (its consumers drop them), but
	// none is expected here.
	Repeated int64 `json:"repeated_webhook_ids"`
	Missing  int64 `json:"records_without_webhook_id"`
}

// auditTopic reads topic from its start to its end offsets (at most
// limit) and counts its messages by webhook-id.
func (b *kafkaBroker) auditTopic(ctx context.Context, topic string, limit time.Duration) (topicAudit, error) {
	ends, err := b.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return topicAudit{}, err
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return topicAudit{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var ids []string
	var a topicAudit
	for a.Records < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return a, fmt.Errorf("audit of %s: read %d of %d messages in %s", topic, a.Records, want, limit)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			a.Records++
			for _, h := range r.Headers {
				if h.Key == "webhook-id" {
					ids = append(ids, string(h.Value))
					return
				}
			}
			a.Missing++
		})
	}
	a.Distinct, a.Repeated = tallyIDs(ids)
	return a, nil
}

// tallyIDs counts the distinct ids, and those that come more than once.
func tallyIDs(ids []string) (distinct, repeated int64) {
	seen := make(map[string]int, len(ids))
	for _, id := range ids {
		seen[id]++
		if seen[id] == 2 {
			repeated++
		}
	}
	return int64(len(seen)), repeated
}

// perSec is n over seconds, 0 without time.
func perSec(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}
