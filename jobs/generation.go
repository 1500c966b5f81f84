package jobs

import (
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

var (
	//go:embed sql/worker_config_publish.sql
	workerConfigPublishSQL string
	//go:embed sql/worker_config_newest.sql
	workerConfigNewestSQL string
	//go:embed sql/worker_config_superseded.sql
	workerConfigSupersededSQL string
	//go:embed sql/worker_process_looked.sql
	workerProcessLookedSQL string
	//go:embed sql/worker_process_leave.sql
	workerProcessLeaveSQL string
)

// GenerationConfig configures a Generation.
type GenerationConfig struct {
	// Fingerprint names this process's configuration of processing: what
	// decides the handlers a delivery runs and the destinations it is
	// routed to (the binary's version, sources, handlers, destinations and
	// routes). Processes with equal fingerprints are interchangeable.
	// Required.
	Fingerprint string

	// Every is how often the process says it runs Fingerprint and looks
	// for a newer one. A configuration no process has said so of for
	// generationLiveFactor × Every is no longer running. Defaults to 1s.
	Every time.Duration

	// Observe, when set, is told of each processing job deferred
	// ("deferred") or, after MaxDeferrals, processed under this
	// configuration all the same ("processed_outdated").
	Observe func(outcome string)

	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

// generationLiveFactor × GenerationConfig.Every is how long a
// configuration counts as running after its last process said so.
const generationLiveFactor = 10

// MaxDeferrals bounds how often an outdated worker snoozes one
// processing job it fetched before it stopped fetching them: a job still
// not taken by a newer process after that many looks is processed here
// all the same, with a warning, rather than left waiting for ever. For the
// jobs it does not fetch, MaxDeferrals looks are how long they may wait
// with none running before it processes them (stallAfter). The snoozes
// a fence makes (generation_fence.go) do not count.
const MaxDeferrals = 30

// Generation leaves the processing of deliveries to the newest
// configuration running. During a rolling deploy that adds a destination,
// a route or a handler, replicas of the old configuration would process
// some deliveries without it: no send for the new destination, ever. With
// a Generation, a worker whose configuration is older than one a live
// process runs stops fetching processing jobs (its River client's
// deliveries queue is removed), so the newer processes take them all, and
// snoozes any it had fetched already (Middleware). It goes on working
// every other job, and resumes processing once no newer configuration
// runs (a failed deploy rolled back, say).
//
// It acts on a look only while the processes of newer configurations
// cannot have counted it gone (the fence, generation_fence.go).
//
// Snoozing alone was not enough: an outdated process that kept fetching
// could take the same job back time after time while a newer one idled
// (a drill saw one job snoozed 29 times by the old process), until
// MaxDeferrals ran out and it processed the job without the new
// configuration.
type Generation struct {
	pool     *pgxpool.Pool
	cfg      GenerationConfig
	id, host string // this process's row in worker_process
	outdated atomic.Bool
	running  atomic.Bool
	ran      chan struct{} // closed when run returns
	since    time.Time     // when Start's look after its publish began (Settle)
	queue    atomic.Pointer[processingQueue]
	// stalled: outdated, yet a processing job has waited longer than
	// stallAfter, so no newer process takes them: this one does.
	stalled      atomic.Bool
	waitingSince time.Time // run's own: since when looks found jobs waiting, none running
	// The fence (generation_fence.go): when the last complete look's
	// publish was sent (clock), whether one has completed, and whether
	// the fence has been logged since.
	born        time.Time
	lookedAt    atomic.Int64
	lookedOnce  atomic.Bool
	fenceLogged atomic.Bool
	// published: a publish has succeeded. Only the first may find the
	// configuration deployed again (worker_config_publish.sql).
	published atomic.Bool
}

// NewGeneration returns a Generation for cfg; Start begins it.
func NewGeneration(pool *pgxpool.Pool, cfg GenerationConfig) (*Generation, error) {
	if cfg.Fingerprint == "" {
		return nil, errors.New("jobs: GenerationConfig.Fingerprint is required")
	}
	if cfg.Every == 0 {
		cfg.Every = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string) {}
	}
	host, _ := os.Hostname()
	return &Generation{pool: pool, cfg: cfg, id: rand.Text(), host: host + ":" + strconv.Itoa(os.Getpid()),
		ran: make(chan struct{}), born: time.Now()}, nil
}

// StartGeneration is NewGeneration, then Start.
func StartGeneration(ctx context.Context, pool *pgxpool.Pool, cfg GenerationConfig) (*Generation, error) {
	g, err := NewGeneration(pool, cfg)
	if err != nil {
		return nil, err
	}
	return g, g.Start(ctx)
}

// Prepare sets whether a newer configuration than this process's runs,
// without saying this one does. Call it before the River client works
// jobs: a replica of an older configuration that restarts beside a newer
// one then defers from its first fetch, where Start, called once River
// works, would leave it a window in which it processes under its old
// configuration. Its answer serves the queue's switch only: processing
// waits for Start's look all the same (fenced), since a newer
// configuration that starts after Prepare does not know of this process
// until Start says it runs.
func (g *Generation) Prepare(ctx context.Context) error {
	var newest string
	err := g.pool.QueryRow(ctx, workerConfigSupersededSQL, pgnamed.Args{"fingerprint": g.cfg.Fingerprint, "live_secs": g.live()}).Scan(&newest)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("jobs: look for a newer configuration: %w", err)
	}
	g.set(true, newest)
	g.applyQueue() // before River starts: it never fetches from the queue
	return nil
}

// Start says this process runs the configuration, and keeps saying so
// and looking for a newer one until ctx ends, recording each look once
// it has taken effect (recordLook): the looks the processes of newer
// configurations wait for (Settle). Call it once the River client works
// jobs: a process that cannot must not draw the processing of older ones
// to itself.
func (g *Generation) Start(ctx context.Context) error {
	g.riverWorks()
	newest, at, err := g.sayAndLook(ctx)
	if err != nil {
		return err
	}
	g.since = at // the look began after the publish committed
	if err := g.recordLook(ctx, newest, at); err != nil {
		return err
	}
	if g.running.CompareAndSwap(false, true) { // a start retried after a later step failed
		go g.run(ctx)
	}
	return nil
}

// Outdated reports whether a newer configuration than this process's
// runs, as of the last look.
func (g *Generation) Outdated() bool { return g.outdated.Load() }

func (g *Generation) live() float64 { return (generationLiveFactor * g.cfg.Every).Seconds() }

// publish says this process runs its configuration. Only its first
// publish may find the configuration deployed again: a running process
// whose publishes stopped for a live window (a database outage, a
// failover, a long pause) has not been redeployed, and after an outage
// every configuration has been silent that long.
func (g *Generation) publish(ctx context.Context, q pgxExecQuerier) error {
	_, err := q.Exec(ctx, workerConfigPublishSQL, pgnamed.Args{"id": g.id, "host": g.host,
		"fingerprint": g.cfg.Fingerprint, "live_secs": g.live(), "first": !g.published.Load()})
	if err != nil {
		return fmt.Errorf("jobs: record this process's configuration: %w", err)
	}
	g.published.Store(true)
	return nil
}

// pgxExecQuerier is a pool or a connection taken from it.
type pgxExecQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// look returns the newest configuration a live process runs, and when
// the look began (database time).
func (g *Generation) look(ctx context.Context, q pgxExecQuerier) (string, time.Time, error) {
	var newest *string
	var at time.Time
	if err := q.QueryRow(ctx, workerConfigNewestSQL, pgnamed.Args{"live_secs": g.live()}).Scan(&at, &newest); err != nil {
		return "", time.Time{}, fmt.Errorf("jobs: look for a newer configuration: %w", err)
	}
	if newest == nil {
		return g.cfg.Fingerprint, at, nil
	}
	return *newest, at, nil
}

// run says and looks every Every until ctx ends. A look that fails keeps
// the last answer: a process that cannot reach the database processes
// nothing either way.
func (g *Generation) run(ctx context.Context) {
	defer close(g.ran)
	t := time.NewTicker(g.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A look answered later than the fence is of no use, and one
		// stuck on a dead connection would keep the process fenced until
		// the kernel gives the connection up.
		cctx, cancel := context.WithTimeout(ctx, fenceLooks*g.cfg.Every)
		if err := g.cycle(cctx); err != nil && ctx.Err() == nil {
			g.cfg.Logger.Warn(err.Error())
		}
		cancel()
	}
}

// cycle is one of run's looks: sayAndLook, then the stall's check and
// the look's record.
func (g *Generation) cycle(ctx context.Context) error {
	newest, at, err := g.sayAndLook(ctx)
	if err != nil {
		return err
	}
	g.lookForStall(ctx)
	return g.recordLook(ctx, newest, at)
}

// sayAndLook says this process runs its configuration, looks for the
// newest, and applies the answer: outdated or not, and the fence's clock
// (looked) once that is set.
func (g *Generation) sayAndLook(ctx context.Context) (newest string, at time.Time, err error) {
	// The fence's clock starts once a connection is held: a wait for one
	// in a busy pool is not silence (the publish's now() comes after it
	// all the same), and counting it would fence a loaded process.
	conn, err := g.pool.Acquire(ctx)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("jobs: look for a newer configuration: %w", err)
	}
	defer conn.Release()
	sent := g.clock()
	if err := g.publish(ctx, conn); err != nil {
		return "", time.Time{}, err
	}
	if newest, at, err = g.look(ctx, conn); err != nil {
		return "", time.Time{}, err
	}
	g.set(newest != g.cfg.Fingerprint, newest)
	g.looked(sent)
	return newest, at, nil
}

func (g *Generation) set(outdated bool, newest string) {
	if g.outdated.Swap(outdated) == outdated {
		return
	}
	go g.applyQueue()
	if outdated {
		g.cfg.Logger.Warn("a process with a newer configuration runs: this process leaves deliveries to it until it stops",
			"this", g.cfg.Fingerprint, "newest", newest)
		return
	}
	g.cfg.Logger.Info("no newer configuration runs: this process processes deliveries again", "this", g.cfg.Fingerprint)
}

// Middleware snoozes the processing jobs (process_delivery,
// process_deliveries) this process takes while it is outdated (deferral):
// a newer process fetches them in the meantime. It snoozes them too while
// its last look is too old to act on, or before its first (fenced,
// generation_fence.go). Snoozing spends no attempt. Every other job runs.
func (g *Generation) Middleware() rivertype.WorkerMiddleware {
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		if job.Kind != (ProcessDeliveryArgs{}).Kind() && job.Kind != (ProcessDeliveriesArgs{}).Kind() {
			return doInner(ctx)
		}
		if g.fenced() {
			return g.fence(ctx, job)
		}
		if !g.outdated.Load() {
			return doInner(ctx)
		}
		if g.stalled.Load() {
			g.cfg.Observe("processed_outdated")
			return doInner(ctx)
		}
		if n := riverdb.Snoozes(job) - fencedSnoozes(job); n < MaxDeferrals {
			g.cfg.Observe("deferred")
			return river.JobSnooze(g.deferral())
		}
		g.cfg.Observe("processed_outdated")
		g.cfg.Logger.Warn("no process of the newer configuration took this job: processing it under this one",
			"job_id", job.ID, "kind", job.Kind, "deferrals", MaxDeferrals)
		return doInner(ctx)
	})
}

// deferral is how long a snoozed job waits: between half and two and a
// half looks, at random. A fixed wait would make the job due again just
// before this process's next fetch, every time, and the newer processes,
// fetching on their own clocks, would never get it.
func (g *Generation) deferral() time.Duration {
	return g.cfg.Every/2 + mathrand.N(2*g.cfg.Every)
}
