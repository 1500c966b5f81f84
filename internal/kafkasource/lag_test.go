package kafkasource_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/kafkasource"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// lagRow is a stored partition's lag.
type lagRow struct {
	Topic     string
	Partition int32
	Lag       int64
	Reading   int // 0 for the newest observed_at of its source, 1 for the one before, …
}

// storedLag is source's stored lag, by partition, newest reading first.
func storedLag(t *testing.T, pool *pgxpool.Pool, source string) []lagRow {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT topic, partition, lag,
		  (dense_rank() OVER (ORDER BY observed_at DESC) - 1)::int AS reading
		FROM kafka_lag WHERE source = $1 ORDER BY reading, topic, partition`, source)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[lagRow])
	require.NoError(t, err)
	return out
}

// While the inbox refuses writes, two readers of one group store the
// whole group's lag as one reading, whichever wrote it last: both
// partitions, the messages waiting, and nothing of a partition the group
// does not have (a row left by an earlier topic set) nor of another
// source. Once the messages are stored it reads 0.
func TestLagStoredWholeByEveryReaderOfTheGroup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `INSERT INTO kafka_lag (source, topic, partition, lag, observed_at) VALUES
		('orders', 'orders.confirmed', 7, 900, now() - interval '1 hour'),
		('orders', 'orders.retired', 0, 900, now() - interval '1 hour'),
		('payments', 'payments', 0, 5, now() - interval '1 hour')`)
	require.NoError(t, err)
	b.consumer(t, "header:event_id")
	b.consumer(t, "header:event_id")
	// Each reader holds one partition before the inbox refuses, so that
	// no rebalance waits behind a batch in hand.
	b.waitMembers(t, 2)
	_, err = b.pool.Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'inbox unavailable'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON inbox FOR EACH STATEMENT EXECUTE FUNCTION refuse();`)
	require.NoError(t, err)
	// A reader stuck on its batch holds up the other's leaving the group:
	// the inbox takes writes again before they stop.
	unstick := sync.OnceFunc(func() {
		_, err := b.pool.Exec(ctx, `DROP TRIGGER refuse ON inbox`)
		require.NoError(t, err)
	})
	t.Cleanup(unstick)
	b.produce(t, ids("lag", 6)...)

	var got []lagRow
	require.Eventually(t, func() bool {
		got = storedLag(t, b.pool, "orders")
		return len(got) == 2 && got[0].Lag+got[1].Lag == 6
	}, 20*time.Second, 20*time.Millisecond, "the stored lag while the inbox refuses writes")
	require.Equal(t, []lagRow{{topic, 0, got[0].Lag, 0}, {topic, 1, got[1].Lag, 0}}, got, "one reading, both partitions, nothing else")
	require.Equal(t, []lagRow{{"payments", 0, 5, 0}}, storedLag(t, b.pool, "payments"), "another source's lag untouched")

	unstick()
	require.Eventually(t, func() bool {
		got = storedLag(t, b.pool, "orders")
		return len(got) == 2 && got[0].Lag+got[1].Lag == 0 && got[1].Reading == 0
	}, 30*time.Second, 20*time.Millisecond, "the stored lag once the messages are stored")
}

// waitMembers waits until the group is stable with n members, each with
// its partitions.
func (b *bundle) waitMembers(t *testing.T, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.cluster.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	require.Eventually(t, func() bool {
		groups, err := adm.DescribeGroups(context.Background(), b.group)
		if err != nil {
			return false
		}
		g := groups[b.group]
		return g.Err == nil && g.State == "Stable" && len(g.Members) == n
	}, 20*time.Second, 20*time.Millisecond, "the group's %d members", n)
}

// A new group that starts at the end reads no lag for the messages before
// it, which it will never read, and then the lag of those after it.
func TestLagOfANewGroupStartingAtTheEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.start = "latest"
	b.produce(t, ids("before", 5)...)
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool {
		got := storedLag(t, b.pool, "orders")
		total, partitions := b.totalLag()
		return len(got) == 2 && partitions == 2 && total == 0
	}, 20*time.Second, 20*time.Millisecond, "the lag of both partitions, read")
	require.Equal(t, []lagRow{{topic, 0, 0, 0}, {topic, 1, 0, 0}}, storedLag(t, b.pool, "orders"))

	b.produce(t, ids("after", 3)...)
	require.Eventually(t, func() bool { rows, _ := b.stored(t); return rows == 3 }, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		got := storedLag(t, b.pool, "orders")
		return len(got) == 2 && got[0].Lag+got[1].Lag == 0
	}, 20*time.Second, 20*time.Millisecond)
}

// Two replicas' readings of one group may commit out of order: an older
// reading stored after a newer one changes none of the newer one's rows,
// and a row of its own beside them is a reading behind; the next reading
// replaces them all, and touches no other source's.
func TestACrossedLagReadingLeavesTheNewestWhole(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	// The newer reading, stamped later than the statement below runs.
	_, err := pool.Exec(ctx, `INSERT INTO kafka_lag (source, topic, partition, lag, observed_at) VALUES
		('orders', 't', 0, 10, now() + interval '1 minute'), ('orders', 't', 1, 20, now() + interval '1 minute')`)
	require.NoError(t, err)
	require.NoError(t, kafkasource.StoreLag(ctx, pool, "orders", []string{"t", "t"}, []int32{0, 2}, []int64{500, 7}))
	require.Equal(t, []lagRow{{"t", 0, 10, 0}, {"t", 1, 20, 0}, {"t", 2, 7, 1}}, storedLag(t, pool, "orders"))

	_, err = pool.Exec(ctx, `UPDATE kafka_lag SET observed_at = now() - interval '1 second'`)
	require.NoError(t, err)
	require.NoError(t, kafkasource.StoreLag(ctx, pool, "payments", []string{"p"}, []int32{0}, []int64{1}))
	require.NoError(t, kafkasource.StoreLag(ctx, pool, "orders", []string{"t", "t"}, []int32{0, 1}, []int64{3, 4}))
	require.Equal(t, []lagRow{{"t", 0, 3, 0}, {"t", 1, 4, 0}}, storedLag(t, pool, "orders"))
	require.Equal(t, []lagRow{{"p", 0, 1, 0}}, storedLag(t, pool, "payments"))
}
