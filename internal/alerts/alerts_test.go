package alerts

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func setup(t *testing.T, rules Rules) (*pgxpool.Pool, *Evaluator) {
	t.Helper()
	pool := testdb.New(t)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	return pool, &Evaluator{Rules: rules, Inbox: ingest.NewInbox(pool, rc), ConsoleURL: "http://127.0.0.1:8081/console/"}
}

func evaluate(t *testing.T, pool *pgxpool.Pool, e *Evaluator) (opened, resolved int) {
	t.Helper()
	require.NoError(t, pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		opened, resolved, err = e.EvaluateTx(context.Background(), tx)
		return err
	}))
	return opened, resolved
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	_, err := pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// alertsRecorded are the alert deliveries in the inbox, by delivery id,
// each with a processing job.
func alertsRecorded(t *testing.T, pool *pgxpool.Pool) map[string]Alert {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT i.delivery_id, i.payload FROM inbox i
		WHERE i.source = 'hookinbox' AND i.origin = 'alert'
		  AND EXISTS (SELECT 1 FROM delivery_job_ids(i.id))`)
	require.NoError(t, err)
	out := map[string]Alert{}
	for rows.Next() {
		var id string
		var body []byte
		require.NoError(t, rows.Scan(&id, &body))
		var a Alert
		require.NoError(t, json.Unmarshal(body, &a))
		out[id] = a
	}
	require.NoError(t, rows.Err())
	return out
}

func ptr[T any](v T) *T { return &v }

// failDelivery records a github delivery failed after its last attempt, as
// processing does: with no processed_at.
func failDelivery(t *testing.T, pool *pgxpool.Pool, inboxID int64) {
	t.Helper()
	exec(t, pool, `INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, last_error)
		VALUES ($1, 'github', 'push', now(), 'failed', 'permanent: no order')`, inboxID)
}

// accept records a github delivery received ago, and counts it in its
// minute as ingest does.
func accept(t *testing.T, pool *pgxpool.Pool, e *Evaluator, id string, ago time.Duration) {
	t.Helper()
	_, err := e.Inbox.Record(context.Background(), ingest.Delivery{Source: "github", DeliveryID: id, EventType: "push",
		Payload: []byte(`{}`)})
	require.NoError(t, err)
	exec(t, pool, `UPDATE inbox SET received_at = now() - $2::interval WHERE delivery_id = $1`, id, ago)
	exec(t, pool, `INSERT INTO ingest_minute (minute, source, outcome, count)
		VALUES (date_trunc('minute', now() - $1::interval), 'github', 'accepted', 1)
		ON CONFLICT (minute, source, outcome) DO UPDATE SET count = ingest_minute.count + 1`, ago)
}

// A destination failing long enough opens one alert, recorded once with
// its job however often evaluation runs; its recovery resolves it once.
func TestDestinationFailingOpensOnceAndResolvesOnce(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{DestinationFailing: ptr(10 * time.Minute)})
	exec(t, pool, `INSERT INTO destination_state (destination, failing_since, last_error)
		VALUES ('orders-api', now() - interval '2 minutes', 'HTTP 503')`)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "not failing for long enough yet")
	exec(t, pool, `UPDATE destination_state SET failing_since = now() - interval '11 minutes'`)
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)))
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "raised once")

	got := alertsRecorded(t, pool)
	require.Len(t, got, 1)
	var opened Alert
	for id, a := range got {
		require.Regexp(t, `^alert-\d+-opened$`, id)
		opened = a
	}
	require.Equal(t, EventOpened, opened.Type)
	require.Equal(t, "destination_failing", opened.Rule)
	require.Equal(t, "orders-api", opened.Subject)
	require.Contains(t, opened.Summary, "Destination orders-api failing since")
	require.Contains(t, opened.Summary, "HTTP 503")
	require.Equal(t, "http://127.0.0.1:8081/console/alerts#a"+itoa(opened.ID), opened.Console, "the link opens the alert")
	require.Equal(t, "http://127.0.0.1:8081/console/#dest-orders-api", opened.SubjectConsole, "and its destination's row")

	exec(t, pool, `UPDATE destination_state SET failing_since = NULL`)
	require.Equal(t, [2]int{0, 1}, pair(evaluate(t, pool, e)))
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "resolved once")
	got = alertsRecorded(t, pool)
	require.Len(t, got, 2)
	resolved := got["alert-"+itoa(opened.ID)+"-resolved"]
	require.Equal(t, EventResolved, resolved.Type)
	require.NotNil(t, resolved.Opened)
}

// A condition that stops before its "for" is forgotten, never raised.
func TestBacklogPendingThenForgotten(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{BacklogOver: ptr(int64(2)), BacklogFor: time.Hour})
	exec(t, pool, `INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
		SELECT g, 'github', 'push', now() FROM generate_series(1, 3) g`)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)))
	exec(t, pool, `DELETE FROM inbox_pending`)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)))
	require.Empty(t, alertsRecorded(t, pool))
	var rows int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM alert").Scan(&rows))
	require.Zero(t, rows)
}

// Failed deliveries, failed sends and a silent source each open their
// alert at once.
func TestFailuresAndSilenceOpen(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{DeliveriesFailed: ptr(1), SendsFailed: ptr(2), Silent: []Silence{{Source: "stripe", For: 2 * time.Hour}}})
	failDelivery(t, pool, 1)
	for i := 1; i <= 2; i++ {
		exec(t, pool, `INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
			event_at, event_received_at, at_is_receipt, state, finished_at)
			VALUES ('chat', 'github', $1, 1, 'push', $1, false, false, now(), now(), true, 'failed', now())`, "d"+itoa(int64(i)))
	}
	require.Equal(t, [2]int{3, 0}, pair(evaluate(t, pool, e)))
	rules := map[string]string{}
	for _, a := range alertsRecorded(t, pool) {
		rules[a.Rule] = a.Subject
	}
	require.Equal(t, map[string]string{"deliveries_failed": "github", "sends_failed": "chat", "source_silent": "stripe"}, rules)
	subjects := map[string]string{}
	for _, a := range alertsRecorded(t, pool) {
		subjects[a.Rule] = a.SubjectConsole
	}
	require.Equal(t, map[string]string{
		"deliveries_failed": "http://127.0.0.1:8081/console/deliveries?source=github&status=failed",
		"sends_failed":      "http://127.0.0.1:8081/console/deliveries?destination=chat&send_status=failed",
		"source_silent":     "http://127.0.0.1:8081/console/#source-stripe",
	}, subjects, "each subject's page")
}

// A delivery resolves a source_silent alert at once, however short the
// silence and wherever in its minute of ingest's counts it came; the
// source stopping for longer than the silence opens a new one.
func TestSourceSilentResolvesOnADeliveryAndOpensOnAStop(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{Silent: []Silence{{Source: "github", For: 5 * time.Second}}})
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)), "nothing ever accepted")
	accept(t, pool, e, "d1", 0)
	require.Equal(t, [2]int{0, 1}, pair(evaluate(t, pool, e)))
	exec(t, pool, `UPDATE inbox SET received_at = now() - interval '6 seconds'`)
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)), "stopped for longer than the silence")
	require.Len(t, alertsRecorded(t, pool), 3)
}

// A silence of a minute or more, counted by the minute, opens only once
// the whole minute of the last count is that far behind: never early.
func TestSourceSilentCountedByTheMinuteNeverOpensEarly(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{Silent: []Silence{{Source: "github", For: 2 * time.Minute}}})
	accept(t, pool, e, "d1", 110*time.Second)
	exec(t, pool, `UPDATE ingest_minute SET minute = now() - interval '170 seconds'`)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "its last minute may end 110s ago")
	exec(t, pool, `UPDATE ingest_minute SET minute = now() - interval '190 seconds'`)
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)))
}

// Two processes evaluating at once raise an alert once.
func TestConcurrentEvaluationsRaiseOnce(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{DeliveriesFailed: ptr(1)})
	failDelivery(t, pool, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { evaluate(t, pool, e) })
	}
	wg.Wait()
	require.Len(t, alertsRecorded(t, pool), 1)
}

func pair(a, b int) [2]int { return [2]int{a, b} }

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Only a delivery its sender sent, from the source itself, ends a
// source's silence: another source's deliveries and a recovery read from
// the provider's API (which hookinbox fetched itself) leave it open.
func TestSourceSilentEndsOnlyOnTheSourcesOwnSentDelivery(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{Silent: []Silence{{Source: "stripe", For: 5 * time.Second}}})
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)), "nothing ever accepted")
	accept(t, pool, e, "gh-1", 0)
	_, err := e.Inbox.Record(context.Background(), ingest.Delivery{Source: "stripe", DeliveryID: "evt_1", EventType: "invoice.paid",
		Origin: ingest.OriginStripeEventsAPI, Payload: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "still silent: github sent, stripe's was recovered")
	_, err = e.Inbox.Record(context.Background(), ingest.Delivery{Source: "stripe", DeliveryID: "evt_2", EventType: "invoice.paid",
		Payload: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 1}, pair(evaluate(t, pool, e)))
}

// deliveries_failed counts the deliveries that failed for good, not the
// ones handlers skipped.
func TestDeliveriesFailedCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{DeliveriesFailed: ptr(2)})
	failDelivery(t, pool, 1)
	exec(t, pool, `INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
		VALUES (2, 'github', 'push', now(), 'skipped', now())`)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)), "one failed, one skipped")
	failDelivery(t, pool, 3)
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)))
}
