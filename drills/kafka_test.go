package drills

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// The Kafka source of the drills' config: topic, and where its forward_url
// points at the stub.
const (
	kafkaTopic       = "orders.confirmed"
	kafkaForwardPath = "/kafka-forward"
	kafkaGroup       = "hookinbox-orders"
)

// TestKafkaSourceCrash kills hookinbox with SIGKILL at random moments while
// a producer writes orders to a topic, some of them twice under one event
// id, and restarts it. Each kill lands while the process reads: after the
// group gave it its partitions, so between an inbox commit and an offset
// commit at times, and those messages come again: they must be
// duplicates. At the end every event is in the inbox once, processed,
// forwarded once, and the group's offsets cover every message; and
// hookinbox recorded messages both before the first kill and after the
// last restart.
//
// Waiting for the group before a kill also keeps the drill clear of a
// fault in kfake's coordinator: a member killed while its JoinGroup waits
// for a rebalance is never given a session timer, so it keeps its
// partitions for good where a real broker would time it out.
func TestKafkaSourceCrash(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	var (
		rate    = 80 // messages a second
		kills   = pick(4, 15)
		reading = pick(2*time.Second, 4*time.Second) // the longest a run reads before its kill
	)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, kafkaTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	b := setup(t, setupOpts{})
	b.cfg.KafkaBrokers = cluster.ListenAddrs()[0]
	p := b.start(t, "hookinbox")
	ctx := context.Background()

	stop := make(chan struct{})
	produced := make(chan producerResult, 1)
	go func() { produced <- produceOrders(ctx, cluster.ListenAddrs(), b.run, rate, stop) }()

	var recordedBeforeKill, recordedAtLastReturn int
	var lastKill time.Time
	for i := range kills {
		waitSession(t, cluster, p)
		time.Sleep(time.Duration(rand.Int64N(int64(reading))))
		if i == 0 {
			recordedBeforeKill = countOrders(t, b)
		}
		p.kill()
		lastKill = time.Now()
		if err := p.restart(); err != nil {
			t.Fatal(err)
		}
		recordedAtLastReturn = countOrders(t, b)
	}
	waitSession(t, cluster, p)
	time.Sleep(reading)
	close(stop)
	res := <-produced
	if res.err != nil {
		t.Fatal(res.err)
	}
	sent, events := res.sent, map[string]bool{}
	for _, id := range sent {
		events[id] = true
	}
	if !waitFor(ctx, 60*time.Second, 100*time.Millisecond, func() bool { return committedOffsets(t, cluster) == int64(len(sent)) }) {
		t.Fatalf("offsets committed %d of %d messages\n%s\n%s", committedOffsets(t, cluster), len(sent), groupState(cluster), p.logTail(200))
	}
	// A job a kill left running waits for River's rescue (minutes):
	// rescue fast-forwards it, as the other crash drills do.
	stranded := rescue(t, b.pool, p, lastKill)
	if !waitFor(ctx, 60*time.Second, 100*time.Millisecond, func() bool { return len(b.stub.Effects(kafkaForwardPath)) >= len(events) }) {
		t.Fatalf("%d of %d events forwarded\n%s", len(b.stub.Effects(kafkaForwardPath)), len(events), p.logTail(40))
	}

	rows := countOrders(t, b)
	t.Logf("%d messages (%d events), %d kills: %d recorded before the first kill, %d by the last restart, %d at the end%s",
		len(sent), len(events), p.Kills(), recordedBeforeKill, recordedAtLastReturn, rows, describeStranded(stranded))
	if recordedBeforeKill == 0 {
		t.Error("nothing was recorded before the first kill")
	}
	if rows == recordedAtLastReturn {
		t.Error("nothing was recorded after the last restart")
	}
	if rows != len(events) {
		t.Errorf("%d inbox rows for %d events", rows, len(events))
	}
	var unprocessed int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM inbox_pending WHERE source = 'orders'`).Scan(&unprocessed); err != nil {
		t.Fatal(err)
	}
	if unprocessed != 0 {
		t.Errorf("%d deliveries never processed", unprocessed)
	}
	effects := b.stub.Effects(kafkaForwardPath)
	for id := range events {
		if n := effects[destination.Key("orders", id, "orders-forward")]; n != 1 {
			t.Errorf("event %s forwarded %d times", id, n)
		}
	}
	if len(effects) != len(events) {
		t.Errorf("%d keys forwarded for %d events: a message was recorded under another id", len(effects), len(events))
	}
}

// waitSession waits until the process's latest run has begun a group
// session: the group assigned it partitions and it reads them.
func waitSession(t *testing.T, cluster *kfake.Cluster, p *proc) {
	t.Helper()
	begun := func() bool {
		log := p.logTail(1 << 20)
		_, run, _ := strings.Cut(log[max(strings.LastIndex(log, "---- drill: starting"), 0):], "\n")
		return strings.Contains(run, "kafka partitions assigned")
	}
	if !waitFor(context.Background(), 60*time.Second, 50*time.Millisecond, begun) {
		t.Fatalf("no group session began within 60s\n%s\n%s", groupState(cluster), p.logTail(60))
	}
}

// producerResult is what produceOrders sent: each message's event id.
type producerResult struct {
	sent []string
	err  error
}

// produceOrders writes rate messages a second until stop closes. About
// one in ten repeats an earlier message's event id.
func produceOrders(ctx context.Context, brokers []string, run string, rate int, stop <-chan struct{}) producerResult {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(kafkaTopic))
	if err != nil {
		return producerResult{err: err}
	}
	defer cl.Close()
	var sent []string
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return producerResult{sent: sent}
		case <-tick.C:
		}
		id := fmt.Sprintf("%s-order-%d", run, i)
		if i > 0 && rand.IntN(10) == 0 {
			id = sent[rand.IntN(len(sent))] // the producer's own repeat
		}
		r := &kgo.Record{Key: []byte(fmt.Sprint(i % 11)), Value: []byte(fmt.Sprintf(`{"order":%q}`, id)),
			Headers: []kgo.RecordHeader{{Key: "event_id", Value: []byte(id)}}}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return producerResult{sent: sent, err: err}
		}
		sent = append(sent, id)
	}
}

// countOrders counts the orders source's inbox rows.
func countOrders(t *testing.T, b *bundle) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM inbox WHERE source = 'orders'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// committedOffsets sums the group's committed offsets: the messages it
// will not be given again.
func committedOffsets(t *testing.T, cluster *kfake.Cluster) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(context.Background(), kafkaGroup)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) { sum += max(o.At, 0) })
	return sum
}

// groupState tells what the cluster knows of the group, for a drill that
// failed: its state and members with their partitions, and each
// partition's committed offset against its end.
func groupState(cluster *kfake.Cluster) string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	ctx, adm := context.Background(), kadm.NewClient(cl)
	var b strings.Builder
	groups, err := adm.DescribeGroups(ctx, kafkaGroup)
	if err != nil {
		fmt.Fprintf(&b, "describe group: %v\n", err)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "group %s: state %s, protocol %s, %d members\n", g.Group, g.State, g.Protocol, len(g.Members))
		for _, m := range g.Members {
			a, _ := m.Assigned.AsConsumer()
			fmt.Fprintf(&b, "  member %s from %s: %v\n", m.MemberID, m.ClientHost, a)
		}
	}
	committed, _ := adm.FetchOffsets(ctx, kafkaGroup)
	ends, _ := adm.ListEndOffsets(ctx, kafkaTopic)
	ends.Each(func(o kadm.ListedOffset) {
		c, _ := committed.Lookup(o.Topic, o.Partition)
		fmt.Fprintf(&b, "partition %d: committed %d of %d\n", o.Partition, c.At, o.Offset)
	})
	return b.String()
}
