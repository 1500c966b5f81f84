package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
)

// registerBatchProbe adds a batchable handler for billing's "ok" and "fail"
// events: both check they got the stored headers and payload and write an
// effect, "fail" then returns an error.
func registerBatchProbe(t *testing.T) func(r *handlers.Registry) {
	return func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.batch_probe", Source: "billing", Events: []string{"ok", "fail"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				// A batch reads headers and payloads apart from the rows.
				if e.Headers.Get("Content-Type") != "application/json" || len(e.Payload) == 0 {
					return handlers.Permanent(errors.New("the handler did not get the delivery's headers and payload"))
				}
				if _, err := e.Tx.Exec(ctx, "INSERT INTO batch_effect VALUES ($1)", e.Delivery.DeliveryID); err != nil {
					return err
				}
				if e.Delivery.EventType == "fail" {
					return errors.New("broken on purpose")
				}
				return nil
			}),
		}))
	}
}

type probeDelivery struct {
	source, id, eventType string
	payload               []byte
}

// deliverTogether records deliveries in one transaction, so River fetches
// their jobs together and they can share a processing batch.
func (b *testBundle) deliverTogether(t *testing.T, ps []probeDelivery) map[string]int64 {
	t.Helper()
	ds := make([]ingest.Delivery, len(ps))
	for i, p := range ps {
		ds[i] = ingest.Delivery{Source: p.source, DeliveryID: p.id, EventType: p.eventType, Payload: p.payload}
	}
	return b.recordTogether(t, ds)
}

// recordTogether is deliverTogether for deliveries as ingest makes them
// (an ordering time, say); it adds the JSON content type.
func (b *testBundle) recordTogether(t *testing.T, ds []ingest.Delivery) map[string]int64 {
	t.Helper()
	for i := range ds {
		ds[i].Headers = http.Header{"Content-Type": {"application/json"}}
	}
	ids := map[string]int64{}
	require.NoError(t, pgx.BeginFunc(context.Background(), b.Pool, func(tx pgx.Tx) error {
		recs, errs, err := b.Inbox.RecordManyTx(context.Background(), tx, ds)
		if err != nil {
			return err
		}
		for i, rec := range recs {
			require.NoError(t, errs[i])
			ids[ds[i].DeliveryID] = rec.ID
		}
		return nil
	}))
	return ids
}

// Batched or alone, every delivery ends as it would alone: a failing
// delivery's effects (its own and its other handlers') roll back, its
// neighbours' commit once.
func TestBatchedProcessingKeepsEachDeliverysOutcome(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]setupOpts{
		"batched": {}, "alone": {batchSize: 1}, "job per batch": {jobPerBatch: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts.register, opts.maxAttempts = registerBatchProbe(t), 1
			b := setupWith(t, opts)
			_, err := b.Pool.Exec(context.Background(), "CREATE TABLE batch_effect (delivery_id text PRIMARY KEY)")
			require.NoError(t, err)
			at := time.Now()
			var ps []probeDelivery
			for i, ev := range []string{"ok", "fail", "ok", "ok", "fail", "ok"} {
				ps = append(ps, probeDelivery{"billing", newID(ev), ev, standardPayload(ev, "r"+string(rune('a'+i)), at)})
			}
			ps = append(ps,
				probeDelivery{"github", newID("star"), "star", []byte(`{"action":"created","repository":{"full_name":"acme/app"}}`)},
				probeDelivery{"github", newID("issue"), "issues", issuePayload("acme/app", 3, "batched", at)})
			ids := b.deliverTogether(t, ps)

			want := map[string]string{"ok": "processed", "fail": "failed", "star": "skipped", "issues": "processed"}
			for _, p := range ps {
				b.WaitStatus(t, ids[p.id], want[p.eventType])
			}
			for _, p := range ps {
				effects := b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id)
				sends := b.count(t, "SELECT count(*) FROM destination_send WHERE delivery_id = $1", p.id)
				switch p.eventType {
				case "ok":
					require.Equal(t, 1, effects, "%s: its effect, once", p.id)
					require.Equal(t, 1, sends, "%s: its destination send, once", p.id)
				case "fail":
					require.Zero(t, effects, "%s: a failed delivery's effects roll back", p.id)
					require.Zero(t, sends, "%s: including its other handlers'", p.id)
					_, lastErr := b.Status(t, ids[p.id])
					require.NotNil(t, lastErr)
					require.Contains(t, *lastErr, "broken on purpose")
				}
			}
			require.Equal(t, 1, b.count(t, "SELECT count(*) FROM github_issue_mirror WHERE repo = 'acme/app' AND number = 3"))

			// Rows recorded in one transaction share its xmin.
			done := b.count(t, "SELECT count(*) FROM delivery WHERE status IN ('processed', 'skipped')")
			txs := b.count(t, "SELECT count(DISTINCT xmin::text) FROM inbox_outcome WHERE status IN ('processed', 'skipped')")
			require.Equal(t, 6, done)
			if opts.batchSize == 1 {
				require.Equal(t, done, txs, "one transaction per delivery")
			} else {
				require.Less(t, txs, done, "deliveries shared processing transactions")
			}
			if opts.jobPerBatch {
				require.Equal(t, 1, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_deliveries' AND state = 'completed'"))
				require.Zero(t, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery'"),
					"no delivery needed a job of its own")
			}
		})
	}
}

// When a batch fails as a whole, its deliveries are processed one by one:
// one poisoned row fails alone and its neighbours' effects commit once.
func TestProcessingBatchFailureFallsBackToOneByOne(t *testing.T) {
	t.Parallel()
	jobModes(t, testProcessingBatchFailureFallsBackToOneByOne)
}

func testProcessingBatchFailureFallsBackToOneByOne(t *testing.T, jobPerBatch bool) {
	b := setupWith(t, setupOpts{register: registerBatchProbe(t), maxAttempts: 1, jobPerBatch: jobPerBatch})
	ctx := context.Background()
	poison := newID("poison")
	_, err := b.Pool.Exec(ctx, `
		CREATE TABLE batch_effect (delivery_id text PRIMARY KEY);
		CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.status IN ('processed', 'skipped')
			   AND EXISTS (SELECT 1 FROM inbox WHERE id = NEW.inbox_id AND delivery_id = '`+poison+`') THEN
				RAISE EXCEPTION 'poisoned row';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON inbox_outcome FOR EACH ROW
		EXECUTE FUNCTION refuse_poison();`)
	require.NoError(t, err)
	at := time.Now()
	ps := []probeDelivery{{"billing", poison, "ok", standardPayload("ok", "p", at)}}
	for i := range 5 {
		ps = append(ps, probeDelivery{"billing", newID("ok"), "ok", standardPayload("ok", "r"+string(rune('a'+i)), at)})
	}
	ids := b.deliverTogether(t, ps)

	for _, p := range ps[1:] {
		b.WaitStatus(t, ids[p.id], "processed")
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id))
	}
	b.WaitStatus(t, ids[poison], "failed")
	_, lastErr := b.Status(t, ids[poison])
	require.NotNil(t, lastErr)
	require.Contains(t, *lastErr, "poisoned row")
	require.Zero(t, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", poison))
	require.Contains(t, b.log.String(), batchFailedLine(jobPerBatch))
}

// batchFailedLine is what is logged when a processing batch fails as a
// whole.
func batchFailedLine(jobPerBatch bool) string {
	if jobPerBatch {
		return "processing batch failed; each of its deliveries gets a job of its own"
	}
	return "processing batch failed; its deliveries are processed one by one"
}

// A delivery's resource version is recorded in the next delivery's round
// trip (ProcessBatch). When that fails, the batch fails as a whole and its
// deliveries are processed one by one: the one whose version cannot be
// recorded fails alone, and its neighbours' effects commit once.
func TestCarriedVersionFailureFallsBackToOneByOne(t *testing.T) {
	t.Parallel()
	jobModes(t, testCarriedVersionFailureFallsBackToOneByOne)
}

func testCarriedVersionFailureFallsBackToOneByOne(t *testing.T, jobPerBatch bool) {
	b := setupWith(t, setupOpts{register: registerBatchProbe(t), maxAttempts: 1, jobPerBatch: jobPerBatch})
	ctx := context.Background()
	_, err := b.Pool.Exec(ctx, `
		CREATE TABLE batch_effect (delivery_id text PRIMARY KEY);
		CREATE FUNCTION refuse_version() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'version refused'; END $$;
		CREATE TRIGGER refuse_version BEFORE INSERT OR UPDATE ON resource_version FOR EACH ROW
		WHEN (NEW.resource_key LIKE '%refused%') EXECUTE FUNCTION refuse_version();`)
	require.NoError(t, err)
	at := time.Now()
	var ps []probeDelivery
	for i := range 6 {
		resource := "r" + string(rune('a'+i))
		if i == 2 || i == 5 { // in the middle, and last (carried into the flush)
			resource += "-refused"
		}
		ps = append(ps, probeDelivery{"billing", newID("ok"), "ok", standardPayload("ok", resource, at)})
	}
	ids := b.deliverTogether(t, ps)

	for i, p := range ps {
		if i == 2 || i == 5 {
			b.WaitStatus(t, ids[p.id], "failed")
			_, lastErr := b.Status(t, ids[p.id])
			require.NotNil(t, lastErr)
			require.Contains(t, *lastErr, "version refused")
			require.Zero(t, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id))
			continue
		}
		b.WaitStatus(t, ids[p.id], "processed")
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id))
	}
	require.Contains(t, b.log.String(), batchFailedLine(jobPerBatch))
}

// A batch does not wait for a resource another transaction holds (two
// batches could wait on each other): that delivery waits alone while the
// rest of its batch commits.
func TestBatchDoesNotWaitForABusyResource(t *testing.T) {
	t.Parallel()
	jobModes(t, testBatchDoesNotWaitForABusyResource)
}

func testBatchDoesNotWaitForABusyResource(t *testing.T, jobPerBatch bool) {
	b := setupWith(t, setupOpts{register: registerBatchProbe(t), jobPerBatch: jobPerBatch})
	ctx := context.Background()
	_, err := b.Pool.Exec(ctx, "CREATE TABLE batch_effect (delivery_id text PRIMARY KEY)")
	require.NoError(t, err)

	// Hold the issue's resource lock (the key lockKey derives).
	holder, err := b.Pool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck
	_, err = holder.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('r:6:github:acme/app#9', 0))")
	require.NoError(t, err)

	at := time.Now()
	ps := []probeDelivery{{"github", newID("issue"), "issues", issuePayload("acme/app", 9, "busy", at)}}
	for i := range 4 {
		ps = append(ps, probeDelivery{"billing", newID("ok"), "ok", standardPayload("ok", "r"+string(rune('a'+i)), at)})
	}
	ids := b.deliverTogether(t, ps)
	for _, p := range ps[1:] {
		b.WaitStatus(t, ids[p.id], "processed")
	}
	status, _ := b.Status(t, ids[ps[0].id])
	require.Equal(t, "received", status, "the busy resource's delivery waits for the lock")

	require.NoError(t, holder.Rollback(ctx))
	b.WaitStatus(t, ids[ps[0].id], "processed")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM github_issue_mirror WHERE repo = 'acme/app' AND number = 9"))
	if jobPerBatch {
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND tags = '{from_batch}'
			AND (args->>'inbox_id')::bigint = $1 AND NOT COALESCE((args->>'alone')::boolean, false)`, ids[ps[0].id]),
			"the busy delivery alone got a job of its own; its batch job decided the others")
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery'"))
	}
}

// A batch must not complete a job River has meanwhile given to another run
// (it took the job for stuck): that member's effects roll back, and the
// other run decides the delivery. With a job per delivery its neighbours
// commit alone; with a job per batch the whole group is that job's. There
// is no real second run here: River's completer records this run's error
// on the bumped job (it does not check the attempt), so the job runs
// again, and every effect must still happen once.
func TestBatchLeavesAJobRiverGaveToAnotherRun(t *testing.T) {
	t.Parallel()
	jobModes(t, testBatchLeavesAJobRiverGaveToAnotherRun)
}

func testBatchLeavesAJobRiverGaveToAnotherRun(t *testing.T, jobPerBatch bool) {
	var bumped atomic.Bool
	var b *testBundle
	// The job that runs the delivery: its own, or its batch's.
	bump := `UPDATE river_job SET attempt = attempt + 1 WHERE id IN (SELECT delivery_job_ids($1))`
	b = setupWith(t, setupOpts{maxAttempts: 3, jobPerBatch: jobPerBatch, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.taken_over", Source: "billing", Events: []string{"ok", "taken"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				if e.EventType == "taken" && bumped.CompareAndSwap(false, true) {
					// What River's rescue and a new fetch do to the job row,
					// from outside the batch's transaction.
					if _, err := b.Pool.Exec(ctx, bump, e.InboxID); err != nil {
						return err
					}
				}
				_, err := e.Tx.Exec(ctx, "INSERT INTO batch_effect VALUES ($1)", e.DeliveryID)
				return err
			}),
		}))
	}})
	_, err := b.Pool.Exec(context.Background(), "CREATE TABLE batch_effect (delivery_id text PRIMARY KEY)")
	require.NoError(t, err)
	at := time.Now()
	ps := []probeDelivery{{"billing", newID("taken"), "taken", standardPayload("taken", "t", at)}}
	for i := range 4 {
		ps = append(ps, probeDelivery{"billing", newID("ok"), "ok", standardPayload("ok", "r"+string(rune('a'+i)), at)})
	}
	ids := b.deliverTogether(t, ps)
	for _, p := range ps {
		b.WaitStatus(t, ids[p.id], "processed")
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id), "%s: its effect, once", p.id)
	}
	require.True(t, bumped.Load())
	if jobPerBatch {
		// The whole batch was the other run's: the job's next run did them all.
		require.Contains(t, b.log.String(), "processing batch not completed by this run")
	} else {
		require.Contains(t, b.log.String(), "processing batch held jobs River had already given to another run")
	}
}

// setupEffectProbe is a bundle whose source has one more batchable handler
// for events, h, and a batch_effect table for it to write; a delivery gets
// one attempt.
func setupEffectProbe(t *testing.T, jobPerBatch bool, source string, events []string, h handlers.HandlerFunc) *testBundle {
	t.Helper()
	b := setupWith(t, setupOpts{maxAttempts: 1, jobPerBatch: jobPerBatch, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.effect_probe", Source: source, Events: events, Ordering: handlers.EveryEvent, Batch: true, Handler: h,
		}))
	}})
	_, err := b.Pool.Exec(context.Background(), "CREATE TABLE batch_effect (delivery_id text PRIMARY KEY)")
	require.NoError(t, err)
	return b
}

// Two deliveries of one resource fetched together still see each other's
// version: the batch takes the first, the second is processed after it,
// alone, and is stale when it is the older one. A handler that fails
// before its delivery sent anything (it only deferred a write) fails alone
// as well: its deferred write is not applied, its neighbours' are.
func TestBatchedDeliveriesOfOneResourceKeepTheirOrder(t *testing.T) {
	t.Parallel()
	jobModes(t, testBatchedDeliveriesOfOneResourceKeepTheirOrder)
}

func testBatchedDeliveriesOfOneResourceKeepTheirOrder(t *testing.T, jobPerBatch bool) {
	b := setupEffectProbe(t, jobPerBatch, "billing", []string{"defer_fail", "defer_ok"}, func(ctx context.Context, e *handlers.Event) error {
		e.Defer("INSERT INTO batch_effect VALUES ($1)", e.Delivery.DeliveryID)
		if e.Delivery.EventType == "defer_fail" {
			return errors.New("broken after deferring")
		}
		return nil
	})
	newer, older := time.Now().Truncate(time.Second), time.Now().Truncate(time.Second).Add(-time.Minute)
	ps := []probeDelivery{
		{"github", newID("issue-newer"), "issues", issuePayload("acme/order", 7, "newer", newer)},
		{"github", newID("issue-older"), "issues", issuePayload("acme/order", 7, "older", older)},
		{"billing", newID("defer-ok"), "defer_ok", standardPayload("defer_ok", "r1", newer)},
		{"billing", newID("defer-fail"), "defer_fail", standardPayload("defer_fail", "r2", newer)},
	}
	ids := b.deliverTogether(t, ps)
	b.WaitStatus(t, ids[ps[0].id], "processed")
	b.WaitStatus(t, ids[ps[1].id], "processed")
	b.WaitStatus(t, ids[ps[2].id], "processed")
	b.WaitStatus(t, ids[ps[3].id], "failed")

	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM delivery WHERE id = $1 AND stale", ids[ps[0].id]), "the newer event is fresh")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM delivery WHERE id = $1 AND stale", ids[ps[1].id]), "the older one, fetched with it, is stale")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM github_issue_mirror WHERE repo = 'acme/order' AND number = 7 AND title = 'newer'"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", ps[2].id))
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", ps[3].id), "a failed delivery's deferred write is not applied")
}

// A handler whose statement on e.Tx fails because an earlier delivery's
// carried statements failed (they go out first) may not wrap that error;
// the batch still fails as a whole and its deliveries are processed one by
// one. Taken for the handler's own failure, rolling back to the savepoint
// would have undone the earlier delivery's work and left it processed.
func TestCarriedFailureSeenByAHandlerFailsTheBatch(t *testing.T) {
	t.Parallel()
	jobModes(t, testCarriedFailureSeenByAHandlerFailsTheBatch)
}

func testCarriedFailureSeenByAHandlerFailsTheBatch(t *testing.T, jobPerBatch bool) {
	b := setupEffectProbe(t, jobPerBatch, "stripe", []string{"defer_bad", "swallow"}, func(ctx context.Context, e *handlers.Event) error {
		if e.Delivery.EventType == "defer_bad" {
			e.Defer("INSERT INTO batch_effect VALUES (NULL)") // violates the primary key
			return nil
		}
		if _, err := e.Tx.Exec(ctx, "INSERT INTO batch_effect VALUES ($1)", e.Delivery.DeliveryID); err != nil {
			return errors.New("swallowed: " + err.Error())
		}
		return nil
	})
	at := time.Now()
	// Bad ones and the deliveries after them alternate, so that some pair
	// shares a batch in that order. Stripe: no destination route, whose
	// handler would see the failure first.
	var ps []probeDelivery
	for i := 0; i < 4; i++ {
		ps = append(ps,
			probeDelivery{"stripe", newID("defer-bad"), "defer_bad", standardPayload("defer_bad", fmt.Sprintf("bad%d", i), at)},
			probeDelivery{"stripe", newID("swallow"), "swallow", standardPayload("swallow", fmt.Sprintf("next%d", i), at)})
	}
	ids := b.deliverTogether(t, ps)
	for _, p := range ps {
		if p.eventType == "defer_bad" {
			b.WaitStatus(t, ids[p.id], "failed")
			continue
		}
		b.WaitStatus(t, ids[p.id], "processed")
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id))
	}
}

// In a batch's job, a delivery whose handler fails is retried in a job of
// its own, scheduled by the retry policy, with the attempt the batch spent
// counted; its neighbours commit with the batch's job. Both jobs are the
// delivery's (delivery_job_ids).
func TestJobPerBatchRetriesAFailedDeliveryAlone(t *testing.T) {
	t.Parallel()
	var failed sync.Map
	b := setupWith(t, setupOpts{maxAttempts: 3, jobPerBatch: true, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.flaky", Source: "stripe", Events: []string{"ok", "flaky"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				if _, err := e.Tx.Exec(ctx, "INSERT INTO batch_effect VALUES ($1)", e.DeliveryID); err != nil {
					return err
				}
				if _, again := failed.LoadOrStore(e.DeliveryID, true); e.EventType == "flaky" && !again {
					return errors.New("flaky the first time")
				}
				return nil
			}),
		}))
	}})
	_, err := b.Pool.Exec(context.Background(), "CREATE TABLE batch_effect (delivery_id text PRIMARY KEY)")
	require.NoError(t, err)
	at := time.Now()
	ps := []probeDelivery{
		{"stripe", newID("ok"), "ok", standardPayload("ok", "a", at)},
		{"stripe", newID("flaky"), "flaky", standardPayload("flaky", "b", at)},
		{"stripe", newID("ok"), "ok", standardPayload("ok", "c", at)},
	}
	ids := b.deliverTogether(t, ps)
	for _, p := range ps {
		b.WaitStatus(t, ids[p.id], "processed")
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM batch_effect WHERE delivery_id = $1", p.id), "%s: its effect, once", p.id)
	}
	flaky := ids[ps[1].id]
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'process_delivery'
		AND (args->>'inbox_id')::bigint = $1 AND max_attempts = 2 AND attempt = 1 AND state = 'completed' AND tags = '{from_batch}'
		AND metadata->>'attempts_before' = '1'`, flaky),
		"the retry: a job of its own with the attempts left, counting on from its batch job's")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery'"), "only the failed delivery's")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_deliveries' AND state = 'completed'"))
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM delivery_job_ids($1)", flaky))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM delivery_job_ids($1)", ids[ps[0].id]))
	require.Contains(t, b.log.String(), "delivery failed; it is retried in a job of its own")
}

// A batch that runs out of time does not take its fast deliveries down
// with its slow one: the fast ones are processed, the slow one fails alone
// after its own attempts, and none is left received with no job to run it.
// With a job per batch, the batch job hands each delivery a job of its own
// that runs alone (a retry of the whole group would time out again, and
// its last attempt would leave all three without a job); with a job per
// delivery, each job's retry runs alone.
func TestBatchTimeoutFailsOnlyTheSlowDelivery(t *testing.T) {
	t.Parallel()
	jobModes(t, func(t *testing.T, jobPerBatch bool) {
		b := setupWith(t, setupOpts{maxAttempts: 2, jobPerBatch: jobPerBatch, jobTimeout: 500 * time.Millisecond,
			register: func(r *handlers.Registry) {
				require.NoError(t, r.Register(handlers.Registration{
					Name: "test.slow", Source: "stripe", Events: []string{"ok", "slow"}, Ordering: handlers.EveryEvent, Batch: true,
					Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
						if e.EventType == "slow" {
							<-ctx.Done()
							return ctx.Err()
						}
						_, err := e.Tx.Exec(ctx, "INSERT INTO timeout_effect VALUES ($1)", e.DeliveryID)
						return err
					}),
				}))
			}})
		_, err := b.Pool.Exec(context.Background(), "CREATE TABLE timeout_effect (delivery_id text)") // no key: a second effect would count
		require.NoError(t, err)
		at := time.Now()
		ps := []probeDelivery{
			{"stripe", newID("ok"), "ok", standardPayload("ok", "a", at)},
			{"stripe", newID("slow"), "slow", standardPayload("slow", "b", at)},
			{"stripe", newID("ok"), "ok", standardPayload("ok", "c", at)},
		}
		ids := b.deliverTogether(t, ps)
		for _, p := range []probeDelivery{ps[0], ps[2]} {
			b.WaitStatus(t, ids[p.id], "processed")
			require.Equal(t, 1, b.count(t, "SELECT count(*) FROM timeout_effect WHERE delivery_id = $1", p.id), "%s: its effect, once", p.id)
		}
		b.WaitStatus(t, ids[ps[1].id], "failed")
		require.Equal(t, map[string]int{"completed": 2, "retryable": 0, "discarded": 1},
			withZero(b.WaitJobs(t, "process_delivery"), "retryable"), "the slow one used its own two attempts")
		if !jobPerBatch {
			return
		}
		require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "process_deliveries"),
			"the batch job is completed by handing its deliveries on, not retried")
		require.Equal(t, 3, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'process_delivery'
			AND tags = '{from_batch}' AND (args->>'alone')::boolean`))
		require.Contains(t, b.log.String(), "processing batch failed; each of its deliveries gets a job of its own")
	})
}

// withZero is m with keys present (0 when absent), for exact comparisons.
func withZero(m map[string]int, keys ...string) map[string]int {
	for _, k := range keys {
		m[k] += 0
	}
	return m
}

// An operator who cancels a running batch job (River UI) stops it as
// cancelling a delivery's own job does: its deliveries stay received, with
// no job handed on, until replayed; a replay then processes them.
func TestCancelledBatchJobLeavesItsDeliveriesReceived(t *testing.T) {
	t.Parallel()
	var slow atomic.Bool
	slow.Store(true)
	b := setupWith(t, setupOpts{jobPerBatch: true, jobTimeout: 2 * time.Second, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.hold", Source: "stripe", Events: []string{"hold"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				if slow.Load() {
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			}),
		}))
	}})
	ctx := context.Background()
	at := time.Now()
	ps := []probeDelivery{
		{"stripe", newID("hold"), "hold", standardPayload("hold", "a", at)},
		{"stripe", newID("hold"), "hold", standardPayload("hold", "b", at)},
	}
	ids := b.deliverTogether(t, ps)
	var jobID int64
	require.Eventually(t, func() bool {
		return b.Pool.QueryRow(ctx, "SELECT id FROM river_job WHERE kind = 'process_deliveries' AND state = 'running'").Scan(&jobID) == nil
	}, 5*time.Second, 10*time.Millisecond)
	_, err := b.Client.JobCancel(ctx, jobID)
	require.NoError(t, err)
	require.Equal(t, "cancelled", b.WaitJob(t, jobID))
	require.Zero(t, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery'"), "nothing handed on")
	for _, p := range ps {
		status, _ := b.Status(t, ids[p.id])
		require.Equal(t, "received", status)
	}
	require.Contains(t, b.log.String(), "processing batch cancelled; its deliveries stay received until replayed")

	slow.Store(false)
	for _, p := range ps {
		b.Replay(t, ids[p.id])
		b.WaitStatus(t, ids[p.id], "processed")
	}
}
