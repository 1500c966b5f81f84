// Package brokertest runs real broker servers for tests: a NATS server
// with JetStream and a Kafka-protocol cluster (franz-go's kfake), each in
// the test process on a real loopback port, stopped when the test ends.
package brokertest

import (
	"context"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
)

// NATS starts a NATS server with JetStream and returns its client URL.
func NATS(t testing.TB) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("brokertest: nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// Stream creates a JetStream stream taking subjects on the server at url.
func Stream(t testing.TB, url, name string, subjects ...string) jetstream.Stream {
	t.Helper()
	return StreamOf(t, url, jetstream.StreamConfig{Name: name, Subjects: subjects})
}

// StreamOf creates the JetStream stream cfg describes (its limits, what
// it does when full) on the server at url.
func StreamOf(t testing.TB, url string, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// Kafka starts a one-broker cluster holding topics of partitions each.
func Kafka(t testing.TB, partitions int32, topics ...string) *kfake.Cluster {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	return cluster
}
