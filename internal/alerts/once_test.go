package alerts

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// replica is another process evaluating rules on pool's database: its own
// pool, inbox and evaluator.
func replica(t *testing.T, pool *pgxpool.Pool, rules Rules) (*pgxpool.Pool, *Evaluator) {
	t.Helper()
	other, err := pgxpool.New(context.Background(), pool.Config().ConnString())
	require.NoError(t, err)
	t.Cleanup(other.Close)
	rc, err := jobs.NewClient(other, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	return other, &Evaluator{Rules: rules, Inbox: ingest.NewInbox(other, rc)}
}

// evaluateAtOnce runs e's evaluation, and r's on rpool while e's is not
// yet committed: what each reported.
func evaluateAtOnce(t *testing.T, pool *pgxpool.Pool, e *Evaluator, rpool *pgxpool.Pool, r *Evaluator) (first, second [2]int) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	first = pair(must2(t)(e.EvaluateTx(ctx, tx)))
	type result struct {
		n   [2]int
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		res.err = pgx.BeginFunc(ctx, rpool, func(tx pgx.Tx) error {
			o, c, err := r.EvaluateTx(ctx, tx)
			res.n = pair(o, c)
			return err
		})
		done <- res
	}()
	testdb.WaitLockWaiters(t, pool, 1, "the second evaluation waits for the first")
	require.NoError(t, tx.Commit(ctx))
	res := <-done
	require.NoError(t, res.err)
	return first, res.n
}

func must2(t *testing.T) func(a, b int, err error) (int, int) {
	return func(a, b int, err error) (int, int) {
		t.Helper()
		require.NoError(t, err)
		return a, b
	}
}

// alertTimes are the one alert's opened and resolved times.
func alertTimes(t *testing.T, pool *pgxpool.Pool) (opened, resolved *time.Time) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT opened_at, resolved_at FROM alert").Scan(&opened, &resolved))
	return opened, resolved
}

// Two replicas evaluating at once raise an alert once and resolve it
// once: the second waits for the first, then finds the alert opened (or
// resolved) and does nothing, and neither does any evaluation after. One
// opened and one resolved event are recorded, and the alert keeps the
// times the first evaluation gave it.
func TestTwoReplicasRaiseOnceAndResolveOnce(t *testing.T) {
	t.Parallel()
	pool, a := setup(t, Rules{DeliveriesFailed: ptr(1)})
	rpool, b := replica(t, pool, a.Rules)
	failDelivery(t, pool, 1)

	first, second := evaluateAtOnce(t, pool, a, rpool, b)
	require.Equal(t, [2]int{1, 0}, first)
	require.Equal(t, [2]int{0, 0}, second, "raised once")
	opened, _ := alertTimes(t, pool)
	require.NotNil(t, opened)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, rpool, b)), "raised once")
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, a)), "raised once")
	again, _ := alertTimes(t, pool)
	require.Equal(t, *opened, *again, "opened when first raised")

	exec(t, pool, "DELETE FROM inbox_outcome") // replayed and processed
	first, second = evaluateAtOnce(t, pool, a, rpool, b)
	require.Equal(t, [2]int{0, 1}, first)
	require.Equal(t, [2]int{0, 0}, second, "resolved once")
	_, resolved := alertTimes(t, pool)
	require.NotNil(t, resolved)
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, rpool, b)), "resolved once")
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, a)), "resolved once")
	_, again = alertTimes(t, pool)
	require.Equal(t, *resolved, *again, "resolved when first resolved")

	got := alertsRecorded(t, pool)
	require.Len(t, got, 2)
	var id int64
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT id FROM alert").Scan(&id))
	require.Equal(t, EventOpened, got["alert-"+itoa(id)+"-opened"].Type)
	require.Equal(t, EventResolved, got["alert-"+itoa(id)+"-resolved"].Type)
}

// A condition is tracked from when it first held, however often it is
// evaluated again: a backlog opens once it has held for its rule's "for"
// since then, and its event says since when.
func TestAnAlertKeepsItsSinceAcrossEvaluations(t *testing.T) {
	t.Parallel()
	pool, e := setup(t, Rules{BacklogOver: ptr(int64(2)), BacklogFor: time.Hour})
	// Ids clear of the alert's own delivery.
	exec(t, pool, `INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
		SELECT g, 'github', 'push', now() FROM generate_series(900001, 900003) g`)
	since := func() time.Time {
		t.Helper()
		var s time.Time
		require.NoError(t, pool.QueryRow(context.Background(), "SELECT since FROM alert").Scan(&s))
		return s
	}
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)))
	tracked := since()
	require.Equal(t, [2]int{0, 0}, pair(evaluate(t, pool, e)))
	require.Equal(t, tracked, since(), "tracked from the first evaluation that saw it")

	// As if the backlog had held for two hours since it was first seen.
	exec(t, pool, "UPDATE alert SET since = since - interval '2 hours'")
	require.Equal(t, [2]int{1, 0}, pair(evaluate(t, pool, e)))
	got := alertsRecorded(t, pool)
	require.Len(t, got, 1)
	for _, a := range got {
		require.Equal(t, "backlog", a.Rule)
		require.True(t, tracked.Add(-2*time.Hour).Equal(a.Since), "since %v, want %v", a.Since, tracked.Add(-2*time.Hour))
	}
}
