package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"riverqueue.com/riverui"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

type sweepBundle struct {
	pool    *pgxpool.Pool
	client  *river.Client[pgx.Tx] // works jobs once started
	inbox   *ingest.Inbox
	sweeper *jobs.OrphanSweeper // the sweep's defaults, run by the test
	log     *testlog.Buffer
	ui      string // River UI, mounted on client
	n       atomic.Int64
}

// setupSweep builds a River client that processes billing deliveries with a
// handler counting its committed runs (sweep_effect), not started yet; cfg,
// when set, wires the periodic sweep into it.
func setupSweep(t *testing.T, cfg *jobs.OrphanSweepConfig) *sweepBundle {
	t.Helper()
	ctx := context.Background()
	logger, logs := testlog.New(t)
	b := &sweepBundle{pool: testdb.New(t), log: logs}
	_, err := b.pool.Exec(ctx, "CREATE TABLE sweep_effect (delivery_id text PRIMARY KEY, runs int NOT NULL)")
	require.NoError(t, err)
	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{{Name: "billing", Provider: "standard"}}})
	require.NoError(t, reg.Register(handlers.Registration{
		Name: "test.sweep_effect", Source: "billing", Events: []string{"ok"}, Ordering: handlers.EveryEvent, Batch: true,
		Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
			_, err := e.Tx.Exec(ctx, `INSERT INTO sweep_effect VALUES ($1, 1)
				ON CONFLICT (delivery_id) DO UPDATE SET runs = sweep_effect.runs + 1`, e.Delivery.DeliveryID)
			return err
		}),
	}))
	b.client, err = jobs.NewClient(b.pool, jobs.ClientConfig{
		Registry: reg, FetchPollInterval: 50 * time.Millisecond, Logger: logger, OrphanSweep: cfg,
		Jobs: config.Jobs{MaxWorkers: 10, Timeout: config.Duration(20 * time.Second), RescueStuckAfter: config.Duration(time.Minute)},
	})
	require.NoError(t, err)
	b.inbox = ingest.NewInbox(b.pool, b.client)
	b.inbox.JobPerBatch = true
	b.sweeper = jobs.NewOrphanSweeper(b.pool, jobs.OrphanSweepConfig{})

	ui, err := riverui.NewHandler(&riverui.HandlerOpts{Endpoints: riverui.NewEndpoints(b.client, nil), Logger: logger, Prefix: "/riverui"})
	require.NoError(t, err)
	require.NoError(t, ui.Start(ctx))
	srv := httptest.NewServer(ui)
	t.Cleanup(srv.Close)
	b.ui = srv.URL + "/riverui"
	return b
}

func (b *sweepBundle) start(t *testing.T) {
	t.Helper()
	require.NoError(t, b.client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.client.Stop(ctx); err != nil {
			_ = b.client.StopAndCancel(context.Background())
		}
	})
}

// record stores n deliveries in one transaction, as an ingest batch does:
// two or more share one process_deliveries job. It returns their inbox ids
// and that job.
func (b *sweepBundle) record(t *testing.T, n int) ([]int64, int64) {
	t.Helper()
	ds := make([]ingest.Delivery, n)
	for i := range ds {
		id := fmt.Sprintf("d%d", b.n.Add(1))
		ds[i] = ingest.Delivery{Source: "billing", DeliveryID: id, EventType: "ok",
			Headers: http.Header{"Content-Type": {"application/json"}},
			Payload: fmt.Appendf(nil, `{"type":"ok","data":{"id":"res-%s"}}`, id)}
	}
	var ids []int64
	var job int64
	require.NoError(t, pgx.BeginFunc(context.Background(), b.pool, func(tx pgx.Tx) error {
		recs, errs, err := b.inbox.RecordManyTx(context.Background(), tx, ds)
		require.NoError(t, err)
		for i, rec := range recs {
			require.NoError(t, errs[i])
			ids, job = append(ids, rec.ID), rec.JobID
		}
		return nil
	}))
	return ids, job
}

// exec runs a statement the test uses to put a job in a state.
func (b *sweepBundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// riverUI posts ids to one of River UI's job actions (cancel, delete), as
// its buttons do.
func (b *sweepBundle) riverUI(t *testing.T, action string, ids ...int64) {
	t.Helper()
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = fmt.Sprint(id)
	}
	body, err := json.Marshal(map[string][]string{"ids": strs})
	require.NoError(t, err)
	res, err := http.Post(b.ui+"/api/jobs/"+action, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "River UI's %s", action)
}

// sweep runs the sweep as of now plus ahead.
func (b *sweepBundle) sweep(t *testing.T, ahead time.Duration) jobs.OrphanSweepResult {
	t.Helper()
	res, err := b.sweeper.Sweep(context.Background(), b.client, time.Now().Add(ahead))
	require.NoError(t, err)
	return res
}

// pastGrace is a sweep's time once the grace has passed for everything the
// test did.
const pastGrace = config.DefaultOrphanGrace + time.Minute

func (b *sweepBundle) status(t *testing.T, id int64) string {
	t.Helper()
	var s string
	require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT status FROM delivery WHERE id = $1", id).Scan(&s))
	return s
}

// requireProcessedOnce waits for each delivery to be processed and checks
// that its handler's effect committed once.
func (b *sweepBundle) requireProcessedOnce(t *testing.T, ids []int64) {
	t.Helper()
	for _, id := range ids {
		require.Eventually(t, func() bool { return b.status(t, id) == "processed" }, 15*time.Second, 20*time.Millisecond,
			"delivery %d never processed", id)
		var runs int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT runs FROM sweep_effect
			WHERE delivery_id = (SELECT delivery_id FROM inbox WHERE id = $1)`, id).Scan(&runs))
		require.Equal(t, 1, runs, "delivery %d's effect", id)
	}
}

func (b *sweepBundle) lastError(t *testing.T, id int64) string {
	t.Helper()
	var e *string
	require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT last_error FROM delivery WHERE id = $1", id).Scan(&e))
	if e == nil {
		return ""
	}
	return *e
}

func (b *sweepBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// A process_deliveries job whose process died on its last attempt: River's
// rescuer discards it, and with it its batch. The sweep gives each delivery
// a job of its own, tagged, and each is processed once.
func TestOrphanSweepRequeuesABatchWhoseJobWasDiscarded(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	ids, job := b.record(t, 3)
	// As a process killed during the job's last attempt leaves it.
	b.exec(t, `UPDATE river_job SET state = 'running', attempt = max_attempts, attempted_at = now() - interval '1 hour',
		attempted_by = '{dead-process}' WHERE id = $1`, job)
	b.start(t)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM river_job WHERE id = $1 AND state = 'discarded'", job) == 1
	}, 15*time.Second, 20*time.Millisecond, "River's rescuer never discarded the job")
	for _, id := range ids {
		require.Equal(t, "received", b.status(t, id))
	}

	res := b.sweep(t, pastGrace)
	require.Equal(t, ids, res.Requeued)
	require.Equal(t, map[string]int{"discarded": 3}, res.ByLastJob)
	b.requireProcessedOnce(t, ids)
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND tags = '{orphan_sweep}'
		AND (args->>'alone')::boolean AND metadata->'orphan_sweep'->>'last_job_state' = 'discarded'
		AND (metadata->'orphan_sweep'->>'last_job_id')::bigint = $1`, job))
	require.Empty(t, b.sweep(t, pastGrace).Requeued, "processed: nothing left to sweep")
}

// A job deleted in River UI, a batch's and a delivery's own: the sweep
// enqueues a job for each delivery, once though two sweeps run at once,
// and each is processed once.
func TestOrphanSweepRequeuesDeliveriesWhoseJobWasDeleted(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	batch, batchJob := b.record(t, 3)
	alone, aloneJob := b.record(t, 1)
	b.riverUI(t, "delete", batchJob, aloneJob)
	require.Zero(t, b.count(t, "SELECT count(*) FROM river_job"))

	other := jobs.NewOrphanSweeper(b.pool, jobs.OrphanSweepConfig{}) // another process's
	var wg sync.WaitGroup
	var results [2]jobs.OrphanSweepResult
	for i, s := range []*jobs.OrphanSweeper{b.sweeper, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			results[i], err = s.Sweep(context.Background(), b.client, time.Now().Add(pastGrace))
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	want := append(append([]int64{}, batch...), alone...)
	require.ElementsMatch(t, want, append(results[0].Requeued, results[1].Requeued...), "each delivery once")
	require.Equal(t, 4, b.count(t, "SELECT count(*) FROM river_job WHERE tags = '{orphan_sweep}' AND metadata->'orphan_sweep'->>'last_job_state' = 'none'"))

	b.start(t)
	b.requireProcessedOnce(t, want)
}

// A delivery whose job handed it on and completed, its follow-up then
// deleted: the sweep finds the completed job as its last.
func TestOrphanSweepRequeuesADeliveryWhoseFollowUpWasDeleted(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	ids, job := b.record(t, 2)
	b.exec(t, "UPDATE river_job SET state = 'completed', attempt = 1, finalized_at = now() WHERE id = $1", job)
	res := b.sweep(t, pastGrace)
	require.Equal(t, ids, res.Requeued)
	require.Equal(t, map[string]int{"completed": 2}, res.ByLastJob)
	b.start(t)
	b.requireProcessedOnce(t, ids)
}

// Cancelling a job is how an operator holds deliveries back
// (docs/admin.md, "River UI"): the sweep leaves them received, whether the job was
// cancelled before it ran or while its process died, and after River has
// pruned the cancelled job, until the operator replays them.
func TestOrphanSweepLeavesACancelledJobsDeliveries(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	batch, batchJob := b.record(t, 2)
	b.riverUI(t, "cancel", batchJob)
	rescued, rescuedJob := b.record(t, 1)
	// Cancelled by an operator while running, then rescued: River's
	// rescuer leaves it cancelled.
	b.exec(t, `UPDATE river_job SET state = 'cancelled', finalized_at = now() - interval '1 hour',
		metadata = jsonb_build_object('cancel_attempted_at', now() - interval '1 hour') WHERE id = $1`, rescuedJob)
	// An earlier job discarded, the operator's replay then cancelled.
	replayed, replayedJob := b.record(t, 1)
	b.exec(t, "UPDATE river_job SET state = 'discarded', finalized_at = now() - interval '1 hour' WHERE id = $1", replayedJob)
	replay, err := b.client.Insert(context.Background(), jobs.ProcessDeliveryArgs{InboxID: replayed[0]}, nil)
	require.NoError(t, err)
	b.riverUI(t, "cancel", replay.Job.ID)

	require.Empty(t, b.sweep(t, pastGrace).Requeued)
	require.Empty(t, b.sweep(t, 30*24*time.Hour).Requeued, "however long ago")
	held := map[int64]int64{batch[0]: batchJob, batch[1]: batchJob, rescued[0]: rescuedJob, replayed[0]: replay.Job.ID}
	for id, job := range held {
		require.Equal(t, "received", b.status(t, id))
		require.Equal(t, fmt.Sprintf(jobs.HoldNote, job), b.lastError(t, id), "the console and the API say why")
	}

	// River prunes cancelled jobs (retention.river_cancelled): the
	// deliveries stay held.
	b.exec(t, "DELETE FROM river_job WHERE state = 'cancelled'")
	require.Empty(t, b.sweep(t, 30*24*time.Hour).Requeued)
	require.Zero(t, b.count(t, "SELECT count(*) FROM river_job WHERE tags = '{orphan_sweep}'"))

	// Until the operator replays one.
	_, err = b.client.Insert(context.Background(), jobs.ProcessDeliveryArgs{InboxID: batch[0]}, nil)
	require.NoError(t, err)
	b.start(t)
	b.requireProcessedOnce(t, batch[:1])
	require.Equal(t, "received", b.status(t, batch[1]))
}

// A delivery whose job is queued, scheduled, retrying, waiting or running
// (a dead process's, not yet rescued) is waiting, not lost, however long
// ago it came; so is one with a live job beside an ended one.
func TestOrphanSweepLeavesDeliveriesWhoseJobIsLive(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	var waiting []int64
	for _, state := range []string{"available", "scheduled", "retryable", "pending", "running"} {
		ids, job := b.record(t, 2)
		b.exec(t, `UPDATE river_job SET state = $2::river_job_state, attempted_at = CASE WHEN $2 = 'running' THEN now() END,
			scheduled_at = now() + interval '1 day' WHERE id = $1`, job, state)
		one, oneJob := b.record(t, 1)
		b.exec(t, "UPDATE river_job SET state = $2::river_job_state, scheduled_at = now() + interval '1 day' WHERE id = $1", oneJob, state)
		waiting = append(append(waiting, ids...), one...)
	}
	// Its batch job discarded, the job it is retried by live.
	ids, job := b.record(t, 2)
	b.exec(t, "UPDATE river_job SET state = 'discarded', finalized_at = now() - interval '1 hour' WHERE id = $1", job)
	for _, id := range ids {
		_, err := b.client.Insert(context.Background(), jobs.ProcessDeliveryArgs{InboxID: id},
			&river.InsertOpts{Tags: []string{jobs.TagFromBatch}, ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
	}
	waiting = append(waiting, ids...)
	b.exec(t, "UPDATE inbox_pending SET received_at = now() - interval '30 days'")

	require.Empty(t, b.sweep(t, 0).Requeued)
	require.Empty(t, b.sweep(t, 30*24*time.Hour).Requeued, "however long they wait")
	for _, id := range waiting {
		require.Equal(t, "received", b.status(t, id))
	}
}

// Nothing is swept within the grace: of a delivery's receipt, nor of its
// last job's end (an operator may retry a discarded job in River UI).
func TestOrphanSweepWaitsForTheGrace(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	fresh, freshJob := b.record(t, 2)
	b.riverUI(t, "delete", freshJob)
	old, oldJob := b.record(t, 1)
	b.exec(t, "UPDATE inbox_pending SET received_at = now() - interval '1 day' WHERE inbox_id = $1", old[0])
	b.exec(t, "UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1", oldJob)

	require.Empty(t, b.sweep(t, 0).Requeued)
	require.Empty(t, b.sweep(t, config.DefaultOrphanGrace-time.Minute).Requeued)
	require.Zero(t, b.count(t, "SELECT count(*) FROM river_job WHERE tags = '{orphan_sweep}'"))
	require.Equal(t, append(fresh, old...), b.sweep(t, pastGrace).Requeued)
}

// A run looks through a window of the pending deliveries and the next one
// goes on from there, so orphans behind a large backlog are found too.
func TestOrphanSweepLooksThroughTheBacklogAWindowARun(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, nil)
	b.sweeper = jobs.NewOrphanSweeper(b.pool, jobs.OrphanSweepConfig{Batch: 2, Scan: 4})
	live, _ := b.record(t, 5)
	lost, lostJob := b.record(t, 3)
	b.riverUI(t, "delete", lostJob)

	var found []int64
	for range 3 {
		found = append(found, b.sweep(t, pastGrace).Requeued...)
	}
	require.Equal(t, lost, found, "5 live, then 3 lost in windows of 4 and batches of 2")
	for _, id := range live {
		require.Equal(t, "received", b.status(t, id))
	}
}

// Wired into the client, the sweep runs at start and then periodically
// (the leader enqueues it), logs what it did and reports it.
func TestOrphanSweepRunsInTheClient(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]int{}
	b := setupSweep(t, &jobs.OrphanSweepConfig{Grace: time.Millisecond, Every: time.Second,
		Observe: func(lastJob string, n int) {
			mu.Lock()
			defer mu.Unlock()
			seen[lastJob] += n
		}})
	ids, job := b.record(t, 2)
	b.exec(t, "DELETE FROM river_job WHERE id = $1", job)
	b.start(t)
	b.requireProcessedOnce(t, ids)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["none"] == 2
	}, 5*time.Second, 20*time.Millisecond)
	require.Contains(t, b.log.String(), "deliveries left with no job were enqueued again")
	require.Contains(t, b.log.String(), "requeued=2")
}

// A run skips the orphans another run holds, rather than waiting for it,
// and takes them once it is gone (had that run committed, its jobs would
// keep them).
func TestOrphanSweepSkipsDeliveriesAnotherRunHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupSweep(t, nil)
	held, heldJob := b.record(t, 1)
	free, freeJob := b.record(t, 1)
	b.riverUI(t, "delete", heldJob, freeJob)
	other, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer other.Rollback(ctx) //nolint:errcheck // a no-op after the test's own
	_, err = other.Exec(ctx, "SELECT 1 FROM inbox_pending WHERE inbox_id = $1 FOR UPDATE", held[0])
	require.NoError(t, err)

	sweepCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := b.sweeper.Sweep(sweepCtx, b.client, time.Now().Add(pastGrace))
	require.NoError(t, err, "a run does not wait for another")
	require.Equal(t, free, res.Requeued)
	require.NoError(t, other.Rollback(ctx))
	require.Equal(t, held, b.sweep(t, pastGrace).Requeued)
}
