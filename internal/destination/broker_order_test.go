package destination_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/brokertest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
)

// kafkaDest makes setupWith's destination "app" a Kafka topic's.
func kafkaDest(brokers []string, topic string) func(d *config.Destination) {
	return func(d *config.Destination) {
		d.URL, d.Secret, d.Headers = "", "", nil
		d.Kafka = &config.KafkaDestination{Brokers: brokers, Topic: topic, Key: "resource"}
	}
}

// readTopic reads every message of topic, waiting until there are n.
func readTopic(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	deadline := time.Now().Add(20 * time.Second)
	for len(recs) < n && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		recs = append(recs, cl.PollFetches(ctx).Records()...)
		cancel()
	}
	require.GreaterOrEqual(t, len(recs), n, "messages on %s", topic)
	return recs
}

// An ordered route to a Kafka topic keyed by resource, as it is by
// default, puts each resource's events in one partition, one at a time in
// the order they were processed: one processed after a newer one of its
// resource arrives after it, marked Hookinbox-Stale, never before it
// unmarked.
func TestKafkaDestinationKeepsEachResourcesOrderInItsPartition(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"resource", ""} {
		t.Run("key "+cmp.Or(key, "by default"), func(t *testing.T) {
			t.Parallel()
			kafkaOrdered(t, key)
		})
	}
}

func kafkaOrdered(t *testing.T, key string) {
	cluster := brokertest.Kafka(t, 3, "events")
	b := setupWith(t, setupOpts{route: func(r *config.Route) { r.Ordered = true }, dest: func(d *config.Destination) {
		kafkaDest(cluster.ListenAddrs(), "events")(d)
		d.Kafka.Key = key
	}})
	start := time.Now().Add(-time.Hour)
	var ids []string
	for i := range 6 {
		for _, res := range []string{"in_A", "in_B"} {
			id, _ := b.deliver(t, "invoice.updated", res, start.Add(time.Duration(i)*time.Minute))
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		b.waitSend(t, id, "succeeded")
	}
	recs := readTopic(t, cluster.ListenAddrs(), "events", len(ids))
	partition := map[string]int32{}
	last := map[string]time.Time{}
	for _, r := range recs {
		var body struct {
			Timestamp time.Time `json:"timestamp"`
		}
		require.NoError(t, json.Unmarshal(r.Value, &body))
		key := string(r.Key)
		if p, ok := partition[key]; ok {
			require.Equal(t, p, r.Partition, "resource %s in one partition", key)
		}
		partition[key] = r.Partition
		stale := false
		for _, h := range r.Headers {
			stale = stale || (h.Key == "Hookinbox-Stale" && string(h.Value) == "true")
		}
		require.Equal(t, body.Timestamp.Before(last[key]), stale,
			"resource %s: a message older than one before it is marked stale, and only such a one: %s", key, describeRecords(recs))
		if body.Timestamp.After(last[key]) {
			last[key] = body.Timestamp
		}
	}
	require.Len(t, partition, 2)
}

// A Kafka destination whose broker is down fails its attempts until its
// circuit opens; once the broker is back the backlog drains, each
// delivery under its one webhook-id.
func TestKafkaDestinationDownOpensTheCircuitThenDrains(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close()) // nothing listens there: the broker is down
	brokers := []string{"127.0.0.1:" + strconv.Itoa(port)}
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		kafkaDest(brokers, "events")(d)
		d.Timeout = config.Duration(300 * time.Millisecond)
		d.Circuit = config.Circuit{Failures: 2, ProbeEvery: config.Duration(200 * time.Millisecond)}
		d.Retry.MaxAge = config.Duration(time.Hour)
	}})
	var ids []string
	for i := range 5 {
		id, _ := b.deliver(t, "invoice.paid", fmt.Sprintf("in_%d", i), time.Now())
		ids = append(ids, id)
	}
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_state WHERE destination = 'app' AND circuit_open_since IS NOT NULL") == 1
	}, 20*time.Second, 20*time.Millisecond, "the circuit opens; log:\n%s", b.log)

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(3, "events"))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	for _, id := range ids {
		b.waitSend(t, id, "succeeded")
	}
	seen := map[string]bool{}
	for _, r := range readTopic(t, brokers, "events", len(ids)) {
		for _, h := range r.Headers {
			if h.Key == "webhook-id" {
				seen[string(h.Value)] = true
			}
		}
	}
	for _, id := range ids {
		require.True(t, seen[destination.Key("billing", id, "app")], "delivery %s on the topic", id)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_state WHERE destination = 'app' AND circuit_open_since IS NOT NULL"),
		"closed again")
}

func describeRecords(recs []*kgo.Record) string {
	out := ""
	for _, r := range recs {
		out += fmt.Sprintf("\n%s p%d o%d %s %v", r.Key, r.Partition, r.Offset, r.Value, r.Headers)
	}
	return out
}
