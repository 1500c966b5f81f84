package alerts

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// part is one partition's lag in a reading.
type part struct {
	topic     string
	partition int32
	lag       int64
}

// readLag stores a reading of source's lag taken ago, as its consumer
// does: in one statement, all its partitions with one observed_at.
func readLag(t *testing.T, pool *pgxpool.Pool, source string, ago time.Duration, parts ...part) {
	t.Helper()
	var topics []string
	var partitions []int32
	var lags []int64
	for _, p := range parts {
		topics, partitions, lags = append(topics, p.topic), append(partitions, p.partition), append(lags, p.lag)
	}
	exec(t, pool, `INSERT INTO kafka_lag (source, topic, partition, lag, observed_at)
		SELECT $1, r.topic, r.partition, r.lag, now() - $5::interval FROM unnest($2::text[], $3::int[], $4::bigint[]) AS r (topic, partition, lag)
		ON CONFLICT (source, topic, partition) DO UPDATE SET lag = excluded.lag, observed_at = excluded.observed_at`,
		source, topics, partitions, lags, ago)
}

// backdate moves the pending or open alerts' since back by d, as if
// their condition had held that much longer.
func backdate(t *testing.T, pool *pgxpool.Pool, d time.Duration) {
	t.Helper()
	exec(t, pool, `UPDATE alert SET since = since - $1::interval WHERE resolved_at IS NULL`, d)
}

// A Kafka source's lag over the rule's over, summed over its partitions
// and topics, opens once it has held for the rule's for, naming the
// source, the lag and the topics; it resolves once the lag falls back to
// over or below.
func TestKafkaLagOpensAfterItsForAndResolves(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{KafkaLag: []KafkaLag{{Source: "orders", Over: 100, For: 5 * time.Minute, Stale: 30 * time.Second}}})
	readLag(t, pool, "orders", 0, part{"orders.confirmed", 0, 100})
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "at over: not above it")
	readLag(t, pool, "orders", 0, part{"orders.confirmed", 0, 60}, part{"orders.confirmed", 1, 60}, part{"orders.refunded", 0, 30})
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "over, but not for 5m yet")
	backdate(t, pool, 4*time.Minute)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "over for 4m")
	backdate(t, pool, time.Minute)
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)))
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "raised once")

	got := alertsRecorded(t, pool)
	require.Len(t, got, 1)
	var opened Alert
	for _, a := range got {
		opened = a
	}
	require.Equal(t, EventOpened, opened.Type)
	require.Equal(t, "kafka_lag", opened.Rule)
	require.Equal(t, "orders", opened.Subject)
	require.Equal(t, "Kafka source orders is 150 messages behind on orders.confirmed, orders.refunded (over 100)", opened.Summary)
	require.Equal(t, "http://127.0.0.1:8081/console/#source-orders", opened.SubjectConsole, "the source's section")

	readLag(t, pool, "orders", 0, part{"orders.confirmed", 0, 60}, part{"orders.confirmed", 1, 40}, part{"orders.refunded", 0, 0})
	require.Equal(t, [2]int{0, 1}, pair(evaluate(t, pool, e)), "back to over: resolved")
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "resolved once")
	resolved := alertsRecorded(t, pool)["alert-"+itoa(opened.ID)+"-resolved"]
	require.Equal(t, EventResolved, resolved.Type)
	require.Equal(t, "Resolved: "+opened.Summary, resolved.Summary)
}

// Only the source's newest reading counts: a row an older reading left
// beside it (replicas' readings crossing) adds nothing, and a source with
// no reading, or of another rule, raises nothing.
func TestKafkaLagCountsTheNewestReadingOnly(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{KafkaLag: []KafkaLag{{Source: "orders", Over: 100}, {Source: "payments", Over: 100}}})
	readLag(t, pool, "orders", time.Second, part{"orders.confirmed", 2, 900})
	readLag(t, pool, "orders", 0, part{"orders.confirmed", 0, 10}, part{"orders.confirmed", 1, 10})
	readLag(t, pool, "refunds", 0, part{"refunds", 0, 900})
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)))
	require.Empty(t, alertsRecorded(t, pool))
}

// The newest reading counts however old it is: a consumer that stopped
// reading keeps its last lag, and the summary says when it was read once
// no reading has come for the rule's stale.
func TestKafkaLagStaleReadingStillCountsAndSaysSo(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{KafkaLag: []KafkaLag{{Source: "orders", Over: 100, Stale: 30 * time.Second}}})
	readLag(t, pool, "orders", 20*time.Second, part{"orders.confirmed", 0, 500})
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)))
	exec(t, pool, `UPDATE kafka_lag SET observed_at = '2026-01-02 03:04:05+00'`)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "still open")
	var summary string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT summary FROM alert WHERE resolved_at IS NULL`).Scan(&summary))
	require.Equal(t, "Kafka source orders is 500 messages behind on orders.confirmed (over 100); read at 2026-01-02 03:04:05 UTC, none since", summary)
	for _, a := range alertsRecorded(t, pool) {
		require.NotContains(t, a.Summary, "none since", "fresh when it opened")
	}
}
