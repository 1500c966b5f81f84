package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// Each delivery in a batch gets the outcome it would have had alone,
// including repeats within the batch.
func TestRecordManyTxOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, inbox := newInbox(t)
	d := pushDelivery
	old, err := inbox.Record(ctx, d("stored", `{"v":1}`))
	require.NoError(t, err)

	var recs []ingest.Recorded
	var errs []error
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		recs, errs, err = inbox.RecordManyTx(ctx, tx, []ingest.Delivery{
			d("new-a", `{"a":1}`),
			d("stored", `{"v":1}`), // a retry of a stored delivery
			d("new-a", `{"a":1}`),  // the same delivery twice in one batch
			d("stored", `{"v":2}`), // same id, other body
			d("new-b", `{"b":1}`),
			d("new-b", `{"b":2}`), // conflicts with its twin earlier in the batch
		})
		return err
	}))
	outcomes := make([]string, len(recs))
	for i := range recs {
		outcomes[i] = string(recs[i].Outcome)
		if errs[i] != nil {
			outcomes[i] = errs[i].Error()
		}
	}
	require.Equal(t, []string{"accepted", "duplicate", "duplicate", ingest.ErrDeliveryConflict.Error(), "accepted", ingest.ErrDeliveryConflict.Error()}, outcomes)
	require.Equal(t, old.ID, recs[1].ID)
	require.Equal(t, recs[0].ID, recs[2].ID)
	require.NotZero(t, recs[0].JobID)
	require.NotZero(t, recs[4].JobID)
	var rows, jobCount int
	require.NoError(t, pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM inbox), (SELECT count(*) FROM river_job)").Scan(&rows, &jobCount))
	require.Equal(t, 3, rows)
	require.Equal(t, 3, jobCount)
}

// With JobPerBatch, a batch's accepted deliveries share one
// process_deliveries job, their ids in ascending order; a duplicate gets
// none, and a delivery Batchable refuses keeps a process_delivery job of
// its own. One batchable delivery alone gets its own job too.
func TestRecordManyTxJobPerBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, inbox := newInbox(t)
	inbox.JobPerBatch = true
	inbox.Batchable = func(source, eventType string) bool { return eventType != "slow" }
	_, err := inbox.Record(ctx, pushDelivery("stored", `{"v":1}`))
	require.NoError(t, err)
	slow := ingest.Delivery{Source: "github", DeliveryID: "slow-1", EventType: "slow", Headers: http.Header{}, Payload: []byte(`{}`)}
	record := func(ds ...ingest.Delivery) []ingest.Recorded {
		var recs []ingest.Recorded
		require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var errs []error
			recs, errs, err = inbox.RecordManyTx(ctx, tx, ds)
			for _, err := range errs {
				require.NoError(t, err)
			}
			return err
		}))
		return recs
	}
	recs := record(pushDelivery("c", `{"c":1}`), slow, pushDelivery("stored", `{"v":1}`), pushDelivery("a", `{"a":1}`),
		pushDelivery("b", `{"b":1}`))
	batchJob := recs[0].JobID
	require.Equal(t, batchJob, recs[3].JobID)
	require.Equal(t, batchJob, recs[4].JobID)
	require.NotEqual(t, batchJob, recs[1].JobID)
	require.Zero(t, recs[2].JobID, "a duplicate enqueues nothing")
	var args string
	require.NoError(t, pool.QueryRow(ctx, "SELECT args::text FROM river_job WHERE id = $1 AND kind = 'process_deliveries'", batchJob).Scan(&args))
	require.JSONEq(t, fmt.Sprintf(`{"inbox_ids":[%d,%d,%d]}`, recs[0].ID, recs[3].ID, recs[4].ID), args, "ingest inserts rows in the batch's order")
	var own int64
	require.NoError(t, pool.QueryRow(ctx, "SELECT (args->>'inbox_id')::bigint FROM river_job WHERE id = $1 AND kind = 'process_delivery'", recs[1].JobID).Scan(&own))
	require.Equal(t, recs[1].ID, own)

	slow.DeliveryID = "slow-2"
	recs = record(pushDelivery("d", `{"d":1}`), slow)
	var kinds []string
	require.NoError(t, pool.QueryRow(ctx, "SELECT array_agg(kind ORDER BY id) FROM river_job WHERE id = ANY($1)",
		[]int64{recs[0].JobID, recs[1].JobID}).Scan(&kinds))
	require.Equal(t, []string{"process_delivery", "process_delivery"}, kinds, "one batchable delivery: a job of its own")
}

// pushDelivery is a GitHub push delivery as ingest records it.
func pushDelivery(id, body string) ingest.Delivery {
	return ingest.Delivery{Source: "github", DeliveryID: id, EventType: "push", Headers: http.Header{}, Payload: []byte(body)}
}

// postConcurrently sends n signed GitHub deliveries at once, delivery i
// with id(i) and githubBody(bodySeed+i), and returns their statuses.
func (b *testBundle) postConcurrently(t *testing.T, n, bodySeed int, id func(i int) string) []int {
	t.Helper()
	var wg sync.WaitGroup
	statuses := make([]int, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body := githubBody(bodySeed + i)
			statuses[i] = b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, id(i), body)).status
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

// Under concurrency the batcher really shares transactions (rows inserted
// together share xmin), and every 202 still has its row and job.
func TestBatchingSharesTransactions(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{batchWindow: 20 * time.Millisecond})
	const n = 40
	b.postAccepted(t, n, 1000, "gh-batch")
	require.Equal(t, counts{n, n}, b.counts(t))
	txs, _ := b.commits(t)
	require.Less(t, txs, n/2, "deliveries shared commits")
}

// postAccepted sends n signed GitHub deliveries at once (ids prefix-i)
// and requires a 202 for each.
func (b *testBundle) postAccepted(t *testing.T, n, bodySeed int, prefix string) {
	t.Helper()
	statuses := b.postConcurrently(t, n, bodySeed, func(i int) string { return fmt.Sprintf("%s-%d", prefix, i) })
	for _, s := range statuses {
		require.Equal(t, http.StatusAccepted, s)
	}
}

// commits reports how many transactions stored the inbox's rows (rows
// inserted together share xmin), and the most rows one of them stored.
func (b *testBundle) commits(t *testing.T) (txs, largest int) {
	t.Helper()
	require.NoError(t, b.pool.QueryRow(context.Background(),
		"SELECT count(*), coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM inbox GROUP BY xmin::text) batches").Scan(&txs, &largest))
	return txs, largest
}

// Deliveries arriving together make one batch, not one per idle runner:
// while a batch forms, the other runners wait their turn to gather.
func TestOneBatchFormsAtATime(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{batchWindow: 500 * time.Millisecond, batchRunners: 4})
	const n = 8
	b.postAccepted(t, n, 3000, "gh-together")
	txs, _ := b.commits(t)
	require.Equal(t, 1, txs, "%d deliveries sent at once, well within one window, committed together", n)
}

// A burst larger than a hand-off commits in parallel batches when another
// runner is free, not in one large batch at a time.
func TestBurstIsHandedOn(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{batchWindow: 500 * time.Millisecond, batchRunners: 2})
	const n = 16
	b.postAccepted(t, n, 4000, "gh-burst")
	txs, largest := b.commits(t)
	require.GreaterOrEqual(t, txs, 2, "%d deliveries at once make more than one batch", n)
	require.LessOrEqual(t, largest, 8, "a batch closes at the hand-off when a runner is free")
}

// A database failure mid-batch fails every delivery in it with 503 and
// stores none of them.
func TestBatchFailureStoresNothing(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{batchWindow: 20 * time.Millisecond})
	_, err := b.pool.Exec(context.Background(), `CREATE FUNCTION refuse_job() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'queue refuses'; END $$;
		CREATE TRIGGER refuse_job BEFORE INSERT ON river_job FOR EACH ROW EXECUTE FUNCTION refuse_job();`)
	require.NoError(t, err)
	const n = 10
	statuses := b.postConcurrently(t, n, 2000, func(i int) string { return fmt.Sprintf("gh-batchfail-%d", i) })
	for _, s := range statuses {
		require.Equal(t, http.StatusServiceUnavailable, s)
	}
	require.Equal(t, counts{0, 0}, b.counts(t))
}

// A delivery the database refuses fails alone: its batch neighbours are
// recorded one by one and answered as if they had come alone.
func TestBatchRefusedDeliveryFailsAlone(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		sizes []int
	)
	b := setupWith(t, setupOpts{batchWindow: 300 * time.Millisecond, batchRunners: 1, observeBatch: func(n int) {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, n)
	}})
	_, err := b.pool.Exec(context.Background(), `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'poisoned delivery'; END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON inbox FOR EACH ROW
		WHEN (NEW.delivery_id = 'gh-poison') EXECUTE FUNCTION refuse_poison();`)
	require.NoError(t, err)
	const n = 6
	statuses := b.postConcurrently(t, n, 3000, func(i int) string {
		if i == 0 {
			return "gh-poison"
		}
		return fmt.Sprintf("gh-neighbour-%d", i)
	})
	require.Equal(t, http.StatusServiceUnavailable, statuses[0])
	for _, s := range statuses[1:] {
		require.Equal(t, http.StatusAccepted, s)
	}
	require.Equal(t, counts{n - 1, n - 1}, b.counts(t))
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, sizes, n, "all six shared one batch before it fell back")
}

// A duplicate whose original commits while the batch's insert waits on it
// is found by the read that follows the insert in the same round trip (a
// statement of its own, so its snapshot is taken after the wait): it is
// answered as a duplicate of that row, not failed as vanished.
func TestRecordManyTxSeesAnOriginalCommittedDuringItsInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, inbox := newInbox(t)
	d := func(id string) ingest.Delivery { return pushDelivery(id, `{"id":"`+id+`"}`) }

	original, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer original.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	orig, err := inbox.RecordTx(ctx, original, d("racing"))
	require.NoError(t, err)

	type result struct {
		recs []ingest.Recorded
		errs []error
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			r.recs, r.errs, err = inbox.RecordManyTx(ctx, tx, []ingest.Delivery{d("racing"), d("bystander")})
			return err
		})
		done <- r
	}()
	testdb.WaitLockWaiters(t, pool, 1, "the batch's insert waits on the uncommitted original")
	require.NoError(t, original.Commit(ctx))

	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, []error{nil, nil}, r.errs)
	require.Equal(t, ingest.Recorded{ID: orig.ID, Outcome: ingest.OutcomeDuplicate}, r.recs[0])
	require.Equal(t, ingest.OutcomeAccepted, r.recs[1].Outcome)
}

// River's insert notification, sent after the batch's COMMIT (which
// travels with the job insert), still reaches a listener: workers wake for
// new deliveries without waiting for their poll.
func TestBatchInsertStillNotifiesWorkers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := setupWith(t, setupOpts{batchWindow: 20 * time.Millisecond})
	listener, err := pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig.Copy())
	require.NoError(t, err)
	t.Cleanup(func() { listener.Close(context.Background()) })
	_, err = listener.Exec(ctx, `LISTEN "public.river_insert"`)
	require.NoError(t, err)

	b.postAccepted(t, 5, 6000, "gh-notify")
	n, err := listener.WaitForNotification(ctx)
	require.NoError(t, err, "no insert notification")
	require.Contains(t, n.Payload, `"queue"`)
	require.Equal(t, counts{5, 5}, b.counts(t))
}

// A batch whose COMMIT went through with River's insert, after which River
// failed (here its insert notification: the role may not call pg_notify),
// is stored with its jobs. It is answered 503, not recorded again delivery
// by delivery (which would answer a first delivery "duplicate"), and the
// provider's retry finds it stored.
func TestBatchStoredThenFailedIs503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testdb.New(t)
	role := fmt.Sprintf("no_notify_%d", time.Now().UnixNano())
	_, err := admin.Exec(ctx, fmt.Sprintf(`CREATE ROLE %[1]s LOGIN PASSWORD 'no-notify';
		GRANT USAGE ON SCHEMA public TO %[1]s;
		GRANT ALL ON ALL TABLES IN SCHEMA public TO %[1]s;
		GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO %[1]s;
		REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC;`, role))
	require.NoError(t, err)
	cfg := admin.Config().Copy()
	cfg.ConnConfig.User, cfg.ConnConfig.Password = role, "no-notify"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pool.Ping(ctx))
	_, err = pool.Exec(ctx, `SELECT pg_notify('x', 'y')`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr, "the role cannot notify")
	require.Equal(t, "42501", pgErr.Code)

	b := setupWith(t, setupOpts{pool: pool, batchWindow: 20 * time.Millisecond})
	statuses := b.postConcurrently(t, 3, 7000, func(i int) string { return fmt.Sprintf("gh-stored-%d", i) })
	for _, s := range statuses {
		require.Equal(t, http.StatusServiceUnavailable, s)
	}
	require.Equal(t, counts{3, 3}, b.counts(t), "stored with their jobs")
	retried := b.postConcurrently(t, 3, 7000, func(i int) string { return fmt.Sprintf("gh-stored-%d", i) })
	for _, s := range retried {
		require.Equal(t, http.StatusOK, s, "the retry is a duplicate")
	}
}
