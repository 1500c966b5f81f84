package kafkasource_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/brokertest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/kafkasource"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const topic = "orders.confirmed"

type bundle struct {
	cluster *kfake.Cluster
	pool    *pgxpool.Pool
	inbox   *ingest.Inbox
	group   string
	maxBody int          // Config.MaxBodyBytes; zero: the default
	start   string       // Config.Start; empty: earliest
	logger  *slog.Logger // nil: slog.Default()

	mu       sync.Mutex
	read     int             // messages in committed batches (ObserveBatch)
	lag      map[int32]int64 // each partition's last reported lag (ObserveLag)
	outcomes map[string]int  // Observe's outcomes
}

// setup starts a Kafka-protocol cluster on a real port (kfake, two
// partitions) and an inbox on a database of the test's own.
func setup(t *testing.T) *bundle {
	t.Helper()
	cluster := brokertest.Kafka(t, 2, topic)
	pool := testdb.New(t)
	river, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	return &bundle{cluster: cluster, pool: pool, inbox: ingest.NewInbox(pool, river), group: "hookinbox-" + t.Name()}
}

// consumer reads the topic from its start into the inbox until the test
// ends or stop is called; stop waits for Run to return.
func (b *bundle) consumer(t *testing.T, deliveryID string) (stop func()) {
	t.Helper()
	return b.counted(t, deliveryID, new(atomic.Int64))
}

// counted is consumer, counting the deliveries it accepted in accepted.
func (b *bundle) counted(t *testing.T, deliveryID string, accepted *atomic.Int64) (stop func()) {
	t.Helper()
	observe := func(_, outcome string, _ time.Duration) {
		if outcome == string(ingest.OutcomeAccepted) {
			accepted.Add(1)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.outcomes == nil {
			b.outcomes = map[string]int{}
		}
		b.outcomes[outcome]++
	}
	start := b.start
	if start == "" {
		start = "earliest"
	}
	c, err := kafkasource.New(kafkasource.Config{Source: "orders", KafkaSource: config.KafkaSource{Brokers: b.cluster.ListenAddrs(),
		Topics: []string{topic}, Group: b.group, DeliveryID: deliveryID, EventType: "header:type", Start: start},
		MaxBodyBytes: b.maxBody, Logger: b.logger,
		Inbox: b.inbox, Pool: b.pool, Observe: observe, ObserveBatch: b.observeBatch, ObserveLag: b.observeLag, LagEvery: 100 * time.Millisecond, RedactHeaders: []string{"X-Api-Key", "X-SIGNING-SECRET"},
		ClientOptions: []kgo.Opt{kgo.FetchMaxWait(200 * time.Millisecond)}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var stopped atomic.Bool
	stop = func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return")
		}
	}
	t.Cleanup(stop)
	return stop
}

func (b *bundle) observeBatch(_, _ string, _ int32, messages int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.read += messages
}

func (b *bundle) observeLag(_, _ string, partition int32, lag int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lag == nil {
		b.lag = map[int32]int64{}
	}
	b.lag[partition] = lag
}

// totalLag is the lag last reported, summed over the partitions, and how
// many partitions reported one.
func (b *bundle) totalLag() (total int64, partitions int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lag {
		total += l
	}
	return total, len(b.lag)
}

// produce writes messages, each with an event_id header (ids[i]) and a
// type header; an empty id leaves the header out.
func (b *bundle) produce(t *testing.T, ids ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	for i, id := range ids {
		r := &kgo.Record{Key: []byte(fmt.Sprintf("order-%d", i%3)), Value: []byte(fmt.Sprintf(`{"id":%q}`, id)),
			Headers: []kgo.RecordHeader{{Key: "type", Value: []byte("order.confirmed")}}}
		if id != "" {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "event_id", Value: []byte(id)})
		}
		require.NoError(t, cl.ProduceSync(context.Background(), r).FirstErr())
	}
}

// stored counts the source's inbox rows and the processing jobs enqueued.
func (b *bundle) stored(t *testing.T) (rows, jobs int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE source = 'orders' AND origin = 'kafka'`).Scan(&rows))
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind IN ('process_delivery', 'process_deliveries')`).Scan(&jobs))
	return rows, jobs
}

// committed is the sum of the group's committed offsets: the number of
// messages it will not be given again.
func (b *bundle) committed(t *testing.T) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(context.Background(), b.group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0 // no member has joined yet
	}
	require.NoError(t, err)
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) {
		require.NoError(t, o.Err)
		sum += max(o.At, 0)
	})
	return sum
}

func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// Every message is recorded once with its job, repeats of an event id are
// duplicates, and the offsets end past every message.
func TestMessagesRecordedThenOffsetsCommitted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sent := append(ids("evt", 20), "evt-3", "evt-7", "evt-3")
	b.produce(t, sent...)
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == int64(len(sent)) }, 20*time.Second, 50*time.Millisecond)
	rows, jobs := b.stored(t)
	require.Equal(t, 20, rows, "a repeated event id is a duplicate")
	require.Equal(t, 20, jobs, "one job per delivery recorded, none for a duplicate")
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.read == len(sent)
	}, 5*time.Second, 10*time.Millisecond, "every message reported in a batch")
	require.Eventually(t, func() bool {
		total, partitions := b.totalLag()
		return total == 0 && partitions == 2
	}, 10*time.Second, 20*time.Millisecond, "both partitions' lag 0 once everything is read")

	var id, eventType, partition, offset string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT delivery_id, event_type, headers->'Kafka-Partition'->>0, headers->'Kafka-Offset'->>0
		FROM inbox WHERE source = 'orders' AND delivery_id = 'evt-0'`).Scan(&id, &eventType, &partition, &offset))
	require.Equal(t, "order.confirmed", eventType, "from the type header")
	require.NotEmpty(t, partition)
	require.NotEmpty(t, offset)
}

// While the inbox refuses writes, no offset moves and nothing is lost:
// once it accepts them again every message is recorded, then committed.
func TestDatabaseOutageMovesNoOffset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'inbox unavailable'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON inbox FOR EACH STATEMENT EXECUTE FUNCTION refuse();`)
	require.NoError(t, err)
	b.produce(t, ids("out", 6)...)
	b.consumer(t, "header:event_id")

	// The consumer has polled and failed at least once.
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_database WHERE datname = current_database() AND xact_rollback > 0`).Scan(&n))
		return n > 0
	}, 20*time.Second, 50*time.Millisecond)
	time.Sleep(time.Second)
	require.Zero(t, b.committed(t), "an offset moved while nothing was stored")
	// The lag says so though no batch commits: every message waits.
	require.Eventually(t, func() bool {
		total, _ := b.totalLag()
		return total == 6
	}, 10*time.Second, 20*time.Millisecond, "the lag while the inbox refuses writes")

	_, err = b.pool.Exec(ctx, `DROP TRIGGER refuse ON inbox`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return b.committed(t) == 6 }, 30*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		total, _ := b.totalLag()
		return total == 0
	}, 10*time.Second, 20*time.Millisecond, "the lag once the messages are stored")
	rows, jobs := b.stored(t)
	require.Equal(t, 6, rows)
	require.Equal(t, 6, jobs)
}

// The process dies between the inbox commit and the offset commit (here:
// the broker refuses every offset commit of the first reader): the next
// reader of the group gets the messages again, and they are duplicates
// that create no row and no job.
func TestRedeliveredAfterTheInboxCommitIsADuplicate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var refuse atomic.Bool
	refuse.Store(true)
	b.cluster.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.cluster.KeepControl()
		if !refuse.Load() {
			return nil, nil, false
		}
		return nil, fmt.Errorf("offset commit refused"), true
	})
	b.produce(t, ids("crash", 8)...)
	stop := b.consumer(t, "offset")
	require.Eventually(t, func() bool { rows, _ := b.stored(t); return rows == 8 }, 20*time.Second, 50*time.Millisecond)
	stop()
	refuse.Store(false)
	require.Zero(t, b.committed(t))

	b.consumer(t, "offset")
	require.Eventually(t, func() bool { return b.committed(t) == 8 }, 20*time.Second, 50*time.Millisecond)
	rows, jobs := b.stored(t)
	require.Equal(t, 8, rows, "the messages read again are duplicates")
	require.Equal(t, 8, jobs)
}

// A commit a rebalance refused is tried again although no message comes
// after the batch: otherwise the group would give it again on the next
// restart, and its lag would stay.
func TestRefusedCommitIsTriedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	refused := b.refuseCommits(2)
	b.produce(t, ids("refused", 5)...)
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 5 }, 20*time.Second, 50*time.Millisecond)
	require.Greater(t, refused.Load(), int32(2), "the first commits were refused")
	rows, jobs := b.stored(t)
	require.Equal(t, 5, rows)
	require.Equal(t, 5, jobs)
}

// refuseCommits answers the first n offset commits as a rebalance in
// progress would, and counts every commit.
func (b *bundle) refuseCommits(n int32) *atomic.Int32 {
	var commits atomic.Int32
	b.cluster.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.cluster.KeepControl()
		if commits.Add(1) > n {
			return nil, nil, false
		}
		commit := req.(*kmsg.OffsetCommitRequest)
		resp := commit.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range commit.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.RebalanceInProgress.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return &commits
}

// A refused commit of the last batch is tried again though no message
// comes after it to carry its offsets.
func TestRefusedCommitIsTriedAgainWithoutANewMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	refused := b.refuseCommits(2)
	b.produce(t, ids("alone", 1)...)
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 1 }, 20*time.Second, 50*time.Millisecond)
	require.Greater(t, refused.Load(), int32(2), "the first commits were refused")
}

// Stopped while a batch's transaction runs, the consumer finishes it and
// commits its offsets before it returns.
func TestStopDrainsTheBatchInHand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
		CREATE TRIGGER slow BEFORE INSERT ON inbox FOR EACH STATEMENT EXECUTE FUNCTION slow();`)
	require.NoError(t, err)
	b.produce(t, ids("drain", 5)...)
	stop := b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event = 'PgSleep'`).Scan(&n))
		return n > 0
	}, 20*time.Second, 10*time.Millisecond)
	stop()
	rows, _ := b.stored(t)
	require.Positive(t, rows, "the batch in hand was recorded")
	require.Equal(t, int64(rows), b.committed(t), "and exactly its offsets committed")
}

// A message without the delivery id header is recorded under its offset;
// a header that is not text is kept in base64; a redacted header is not
// kept at all.
func TestMessageWithoutItsIDIsRecordedUnderItsOffset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	r := &kgo.Record{Partition: 0, Value: []byte(`{}`), Headers: []kgo.RecordHeader{
		{Key: "type", Value: []byte("x\x00y")}, {Key: "trace", Value: []byte{0xff, 0x00}},
		{Key: "x-api-key", Value: []byte("s3cret")}, {Key: "Authorization", Value: []byte("Bearer s3cret")}}}
	require.NoError(t, cl.ProduceSync(context.Background(), r).FirstErr())
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 1 }, 20*time.Second, 50*time.Millisecond)
	var id, eventType, trace string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT delivery_id, event_type, headers->'trace'->>0
		FROM inbox WHERE source = 'orders'`).Scan(&id, &eventType, &trace))
	require.Regexp(t, `^orders\.confirmed/\d/0$`, id)
	require.Equal(t, topic, eventType, "a type header that is no name falls back to the topic")
	require.Equal(t, "base64:/wA=", trace)
	var stored string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT headers::text FROM inbox WHERE source = 'orders'`).Scan(&stored))
	require.NotContains(t, stored, "s3cret", "redact_headers and Authorization are never stored")
}

// Two readers share the group while messages arrive: partitions move
// between them as the second joins and the first leaves, and every message
// is recorded once, with one job.
func TestRebalanceRecordsEveryMessageOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 300
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	produced := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			r := &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))}
			if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				produced <- err
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		produced <- nil
	}()
	var first, second atomic.Int64
	stopFirst := b.counted(t, "offset", &first)
	require.Eventually(t, func() bool { return first.Load() > 0 }, 20*time.Second, 10*time.Millisecond)
	b.counted(t, "offset", &second)
	require.Eventually(t, func() bool { return second.Load() > 0 }, 20*time.Second, 10*time.Millisecond,
		"the second reader got partitions")
	stopFirst()
	require.NoError(t, <-produced)
	require.Eventually(t, func() bool { return b.committed(t) == n }, 30*time.Second, 50*time.Millisecond)
	rows, jobs := b.stored(t)
	require.Equal(t, n, rows)
	require.Equal(t, n, jobs)
	require.Equal(t, int64(n), first.Load()+second.Load(), "each message accepted by exactly one of them")
}

// A clean stop while the inbox refuses writes commits no offset, whether
// it comes between two attempts at the batch or during one that then
// fails: the batch was never stored, so the group's next reader gets it,
// and records every message once the inbox takes writes again.
func TestStopDuringADatabaseOutageCommitsNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		attempt  string // the refusing trigger's body after counting the attempt
		attempts int64  // attempts made before the stop
	}{
		{name: "between attempts", attempt: `RAISE EXCEPTION 'inbox unavailable';`, attempts: 2},
		{name: "during an attempt", attempt: `PERFORM pg_sleep(1); RAISE EXCEPTION 'inbox unavailable';`, attempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := context.Background()
			// A sequence counts the attempts: nextval outlives the
			// transaction the trigger fails.
			_, err := b.pool.Exec(ctx, `CREATE SEQUENCE attempts;
				CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
				$$ BEGIN PERFORM nextval('attempts'); `+tc.attempt+` END $$;
				CREATE TRIGGER refuse BEFORE INSERT ON inbox FOR EACH STATEMENT EXECUTE FUNCTION refuse();`)
			require.NoError(t, err)
			b.produce(t, ids("stop", 6)...)
			stop := b.consumer(t, "header:event_id")
			require.Eventually(t, func() bool {
				var n int64
				require.NoError(t, b.pool.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM attempts`).Scan(&n))
				return n >= tc.attempts
			}, 20*time.Second, 10*time.Millisecond)
			stop()
			require.Zero(t, b.committed(t), "an offset moved though nothing was stored")
			rows, _ := b.stored(t)
			require.Zero(t, rows)

			_, err = b.pool.Exec(ctx, `DROP TRIGGER refuse ON inbox`)
			require.NoError(t, err)
			b.consumer(t, "header:event_id")
			require.Eventually(t, func() bool { return b.committed(t) == 6 }, 20*time.Second, 50*time.Millisecond)
			rows, jobs := b.stored(t)
			require.Equal(t, 6, rows, "the next reader got every message")
			require.Equal(t, 6, jobs)
		})
	}
}
