package jobs

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// TagOrphanSweep marks a process_delivery job the orphan sweep enqueued for
// a delivery River had no job left to process (in River UI, and for the
// console's and the CLI's list of a delivery's jobs).
const TagOrphanSweep = "orphan_sweep"

// holdNote is the last error the sweep writes on a delivery whose last job
// an operator cancelled (%d: the job; riverdb's orphan_sweep_find.sql reads it back
// from the start of the note), so that the delivery stays held once River
// has pruned that job (retention.river_cancelled).
const holdNote = "job %d was cancelled by an operator: the delivery stays received until it is replayed"

// heldLike is the LIKE pattern of a holdNote.
var heldLike = strings.Replace(holdNote, "%d", "%", 1)

// OrphanSweepConfig configures the sweep that gives a job back to the
// deliveries left received with none. River's rescuer discards a job whose
// process died on its last attempt (killed, out of memory), and River UI
// deletes jobs; a process_deliveries job takes its whole batch with it.
// A delivery whose last job an operator cancelled is left alone: that is
// how an operator holds a delivery back until replaying it.
type OrphanSweepConfig struct {
	// Grace is how long ago a delivery must have been received, and its
	// last job have ended (when River still has one), for the sweep to
	// take it. A delivery waiting for its job is never taken, however long
	// it waits: the sweep reads its jobs' states, and one queued,
	// scheduled, retrying or running (a dead process's included, until the
	// rescuer decides) keeps it. Grace is the time an operator has to
	// retry a discarded job in River UI before the sweep enqueues another.
	// Defaults to config.DefaultOrphanGrace (5m), jobs.orphan_grace's
	// default.
	Grace time.Duration

	// Every is how often the sweep runs (River's leader enqueues it: one
	// runner cluster-wide). Defaults to 1m.
	Every time.Duration

	// Batch is the most deliveries one run enqueues again. Defaults to
	// 1000 (five batch jobs' worth).
	Batch int

	// Scan is the most pending deliveries past the grace one run looks at:
	// a large backlog is looked through a window a run, the next run
	// going on from where the last stopped, so that a run costs the same
	// on any backlog (80-250 ms for 10,000 beside 150,000 jobs, measured
	// on a 2-core machine). Where it stopped is kept by the process that
	// ran it, so with several workers each goes on from its own last
	// window.
	// Defaults to 10 × Batch.
	Scan int

	// Observe, when set, is told after each run how many deliveries it
	// enqueued again, by the state of the last job River still had of
	// them: "discarded", "completed" (the job it handed the delivery to is
	// gone) or "none" (every job is gone: deleted, or pruned by River).
	Observe func(lastJob string, n int)
}

func (c OrphanSweepConfig) WithDefaults() OrphanSweepConfig {
	if c.Grace == 0 {
		c.Grace = config.DefaultOrphanGrace
	}
	if c.Every == 0 {
		c.Every = time.Minute
	}
	if c.Batch == 0 {
		c.Batch = 1000
	}
	if c.Scan == 0 {
		c.Scan = 10 * c.Batch
	}
	if c.Observe == nil {
		c.Observe = func(string, int) {}
	}
	return c
}

// orphanSweepArgs runs one pass of the orphan sweep.
type orphanSweepArgs struct{}

func (orphanSweepArgs) Kind() string { return "orphan_sweep" }

// orphanSweepPeriodicJob schedules the sweep every period, and once at
// start.
func orphanSweepPeriodicJob(every time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		// Unique per period (River's least is a second): runs do not pile
		// up behind a busy queue. Two at once would still enqueue each
		// delivery once (Sweep).
		return orphanSweepArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: max(every, time.Second)}}
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

// orphanSweepResult is what one run did.
type orphanSweepResult struct {
	// Scanned is how many pending deliveries past the grace it looked at.
	Scanned int
	// Requeued are the deliveries it enqueued a job for, in id order, and
	// Jobs those jobs.
	Requeued []int64
	Jobs     []int64
	// ByLastJob counts Requeued by the state of the last job River still
	// had of each ("discarded", "completed", "none").
	ByLastJob map[string]int
}

// OrphanSweeper finds deliveries River has no job left for and enqueues
// one for each (riverdb's orphan_sweep_find.sql says which).
type OrphanSweeper struct {
	pool *pgxpool.Pool
	cfg  OrphanSweepConfig

	mu    sync.Mutex
	after int64 // where the next run's window starts
}

func NewOrphanSweeper(pool *pgxpool.Pool, cfg OrphanSweepConfig) *OrphanSweeper {
	return &OrphanSweeper{pool: pool, cfg: cfg.WithDefaults()}
}

// orphanSweepMeta is the metadata of the sweep's job: what River still had
// of the delivery's jobs.
type orphanSweepMeta struct {
	OrphanSweep struct {
		LastJobID    *int64 `json:"last_job_id"`
		LastJobState string `json:"last_job_state"`
	} `json:"orphan_sweep"`
}

// Sweep makes one run as of now: it enqueues a process_delivery job for
// each orphan it finds, in the transaction that holds the orphans' pending
// rows. Each job runs alone (ProcessDeliveryArgs.Alone), since what killed
// a batch's process may be one of its deliveries. Concurrent runs never
// enqueue one delivery twice: each skips the rows another holds, and the
// job is unique by its args while one is live, so a run whose window
// started before another's commit finds the job there.
func (s *OrphanSweeper) Sweep(ctx context.Context, ins Inserter, now time.Time) (orphanSweepResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := orphanSweepResult{ByLastJob: map[string]int{}}
	var (
		lastID int64
		found  []orphan
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if res.Scanned, lastID, found, err = s.findTx(ctx, tx, now.Add(-s.cfg.Grace)); err != nil {
			return err
		}
		res.Requeued, res.Jobs, err = enqueueOrphansTx(ctx, tx, ins, found)
		return err
	})
	if err != nil {
		// The window is looked at again.
		return orphanSweepResult{ByLastJob: map[string]int{}}, fmt.Errorf("orphan sweep: %w", err)
	}
	s.advance(res.Scanned, lastID, found)
	for _, o := range found {
		if slices.Contains(res.Requeued, o.inboxID) {
			res.ByLastJob[o.lastJobState]++
		}
	}
	for state, n := range res.ByLastJob {
		s.cfg.Observe(state, n)
	}
	return res, nil
}

// orphan is a delivery River has no job left for, and the last job it
// still has, if any.
type orphan struct {
	inboxID      int64
	lastJobID    *int64
	lastJobState string // "none" when River has no job of it
}

// findTx reads the window (riverdb.FindOrphans): how many pending
// deliveries it held, the last one's id, and the orphans among them,
// locked.
func (s *OrphanSweeper) findTx(ctx context.Context, tx pgx.Tx, cutoff time.Time) (scanned int, lastID int64, found []orphan, err error) {
	// With no statistics on a job's args the planner expects hundreds of
	// jobs a delivery, and the window's query costs enough to be compiled:
	// 300 ms of JIT against 80-250 ms of running it on a window of 10,000.
	if _, err := tx.Exec(ctx, "SET LOCAL jit = off"); err != nil {
		return 0, 0, nil, err
	}
	rows, err := riverdb.FindOrphans(ctx, tx, riverdb.OrphanWindow{
		After: s.after, Cutoff: cutoff, Scan: s.cfg.Scan, Batch: s.cfg.Batch,
		HoldNote: strings.Replace(holdNote, "%d", "%s", 1), HeldLike: heldLike,
	})
	if err != nil {
		return 0, 0, nil, err
	}
	var (
		inboxID   *int64
		lastJobID *int64
		lastState *string
	)
	_, err = pgx.ForEachRow(rows, []any{&scanned, &lastID, &inboxID, &lastJobID, &lastState}, func() error {
		if inboxID == nil {
			return nil
		}
		o := orphan{inboxID: *inboxID, lastJobID: lastJobID, lastJobState: "none"}
		if lastState != nil {
			o.lastJobState = *lastState
		}
		found = append(found, o)
		return nil
	})
	return scanned, lastID, found, err
}

// enqueueOrphansTx enqueues a job for each orphan in tx, tagged, with what
// River still had of its jobs in the metadata, and returns the deliveries
// that got one and their jobs. A delivery that another run gave a job
// since this one looked gets none: the job is unique by its args.
func enqueueOrphansTx(ctx context.Context, tx pgx.Tx, ins Inserter, found []orphan) (requeued, jobIDs []int64, err error) {
	if len(found) == 0 {
		return nil, nil, nil
	}
	params := make([]river.InsertManyParams, len(found))
	for i, o := range found {
		var meta orphanSweepMeta
		meta.OrphanSweep.LastJobID, meta.OrphanSweep.LastJobState = o.lastJobID, o.lastJobState
		raw, err := json.Marshal(meta)
		if err != nil {
			return nil, nil, err
		}
		params[i] = river.InsertManyParams{Args: ProcessDeliveryArgs{InboxID: o.inboxID, Alone: true},
			InsertOpts: &river.InsertOpts{Tags: []string{TagOrphanSweep}, Metadata: raw,
				UniqueOpts: river.UniqueOpts{ByArgs: true}}}
	}
	inserted, err := ins.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, nil, fmt.Errorf("enqueue: %w", err)
	}
	for i, r := range inserted {
		if r.UniqueSkippedAsDuplicate {
			continue
		}
		requeued, jobIDs = append(requeued, found[i].inboxID), append(jobIDs, r.Job.ID)
	}
	return requeued, jobIDs, nil
}

// advance moves the window on: past the last orphan taken when the run
// took a full batch (the rest of its window is looked at again), past the
// window when it was full, else back to the start.
func (s *OrphanSweeper) advance(scanned int, lastID int64, taken []orphan) {
	switch {
	case len(taken) == s.cfg.Batch:
		s.after = taken[len(taken)-1].inboxID
	case scanned == s.cfg.Scan:
		s.after = lastID
	default:
		s.after = 0
	}
}

// orphanSweepWorker runs the sweep and logs what it did.
type orphanSweepWorker struct {
	river.WorkerDefaults[orphanSweepArgs]
	sweeper *OrphanSweeper
	logger  *slog.Logger
}

func newOrphanSweepWorker(sweeper *OrphanSweeper, logger *slog.Logger) *orphanSweepWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &orphanSweepWorker{sweeper: sweeper, logger: logger}
}

func (w *orphanSweepWorker) Work(ctx context.Context, _ *river.Job[orphanSweepArgs]) error {
	res, err := w.sweeper.Sweep(ctx, river.ClientFromContext[pgx.Tx](ctx), time.Now())
	if err != nil {
		return err
	}
	if len(res.Requeued) == 0 {
		return nil
	}
	w.logger.Warn("deliveries left with no job were enqueued again (their job was discarded or deleted)",
		"requeued", len(res.Requeued), "last_job_discarded", res.ByLastJob["discarded"],
		"last_job_completed", res.ByLastJob["completed"], "no_job_left", res.ByLastJob["none"],
		"first_inbox_id", res.Requeued[0], "last_inbox_id", res.Requeued[len(res.Requeued)-1],
		"grace", w.sweeper.cfg.Grace.String())
	return nil
}
