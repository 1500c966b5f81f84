package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// ClientConfig configures the River client hookinbox runs.
type ClientConfig struct {
	// Registry holds the handlers that process deliveries and the workers
	// of their follow-up jobs. Required unless InsertOnly.
	Registry *handlers.Registry

	// Middleware wraps every job's insert and work, outermost first
	// (tracing: otelriver's). Nil: none.
	Middleware []rivertype.Middleware

	// InsertOnly builds a client that enqueues but works nothing (an
	// ingest-only process). Defaults to false.
	InsertOnly bool

	// Jobs is the jobs block of hookinbox.yaml, whose defaults
	// (Jobs.WithDefaults) and checks are internal/config's: MaxWorkers,
	// how many jobs of each queue one process works at once (for
	// deliveries, at least BatchSize × 8 while batching: see
	// deliveryWorkers); BatchSize, the most deliveries one processing
	// transaction holds (see processBatcher; 1 gives each delivery a
	// transaction of its own); BatchWindow, how long the first delivery
	// of a batch waits for others to join it (River starts the jobs of one
	// fetch together, so a short window catches them); Timeout, which
	// bounds one run of a job (its context is cancelled after it; long
	// jobs, retention and bulk replay, work in slices of two thirds of it
	// and snooze to continue); RescueStuckAfter, how long a job may stay
	// running before River takes it for stuck (its process died) and runs
	// it again; and OrphanGrace, the orphan sweep's grace
	// (OrphanSweepConfig.Grace, unless that is set).
	config.Jobs

	// FetchCooldown is the least time between two fetches of a queue.
	// River fetches up to MaxWorkers jobs at a time, so
	// MaxWorkers/FetchCooldown caps one process's rate per queue: River's
	// 100ms default with 50 workers held processing at 500/s in the
	// benchmark (deliveries have 1,600 workers while batching: 40,000/s
	// at 40ms). The jobs of one fetch form one processing batch, so under
	// moderate load a longer cooldown makes fewer, larger batches: 40ms
	// costs less CPU per delivery than 10ms (bench/README.md, Design
	// decisions, "River fetching and polling"). An idle queue's first job
	// is fetched at once. Defaults to 40ms.
	FetchCooldown time.Duration

	// HandOff, when set, is where this process's ingest hands on the
	// headers and payloads it stores (ingest.Inbox.HandOff): a processing
	// batch takes them there instead of reading them back. Nil: every
	// batch reads them.
	HandOff *inbox.HandOff

	// ObserveBatch, when set, is told the size of every processing batch.
	ObserveBatch func(n int)

	// MaxAttempts is how many times a job runs before River gives up (and a
	// delivery is marked failed). Defaults to River's (25).
	MaxAttempts int

	// RetryPolicy decides when a failed job runs again. Defaults to River's
	// (attempt^4 seconds, plus jitter).
	RetryPolicy river.ClientRetryPolicy

	// FetchPollInterval is how often the deliveries queue looks for jobs
	// besides being notified of inserts. River notifies a queue of inserts
	// at most once per FetchCooldown, so a delivery committed just after a
	// notified one can wait for this poll: it bounds the ack→processed
	// latency at the end of a burst. Defaults to River's (1s).
	FetchPollInterval time.Duration

	// FollowUpFetchPollInterval is FetchPollInterval for every other
	// queue: the downstream calls, the default queue (retention, bulk
	// replays, redelivery) and the Registry's own queues. None of them is
	// on the path from a provider's request to its processing, and every
	// poll is a query and a few wake-ups of an idle process: one poll a
	// second on all three of serve's queues was a large share of its idle
	// CPU (bench/README.md, Design decisions, "River fetching and
	// polling"). The price: a follow-up job committed within
	// FetchCooldown of a notified one, with no job after it, waits up to
	// this long to start (a saga's call at the end of a burst). Defaults
	// to 5 × FetchPollInterval (5s with River's).
	FollowUpFetchPollInterval time.Duration

	// ObserveDelivery, when set, is told about every processing attempt:
	// the event type, the outcome (processed, skipped, retry, failed) and
	// how long it took.
	ObserveDelivery func(eventType, outcome string, d time.Duration)

	// Retention, when set, runs the retention pass every RetentionEvery
	// (River's leader enqueues it: one runner cluster-wide).
	Retention      *RetentionConfig
	RetentionEvery time.Duration

	// Generation, when set, leaves processing to the processes of a newer
	// configuration while one runs (StartGeneration). Nil: this process
	// processes whatever it fetches.
	Generation *Generation

	// OrphanSweep, when set, runs the sweep that enqueues a job again for
	// deliveries River has none left for (OrphanSweepConfig).
	OrphanSweep *OrphanSweepConfig

	// RiverCompletedRetention, RiverCancelledRetention and
	// RiverDiscardedRetention are how long River keeps finished jobs.
	// Defaults to River's (24h, 24h, 7d).
	RiverCompletedRetention time.Duration
	RiverCancelledRetention time.Duration
	RiverDiscardedRetention time.Duration

	// PeriodicJobs and AddWorkers bring jobs from outside the handlers, such
	// as the periodic GitHub redelivery. The Registry's own periodic jobs
	// (Registry.PeriodicJobs, such as the saga's sweep) run besides these.
	PeriodicJobs []*river.PeriodicJob
	AddWorkers   func(*river.Workers) error

	// LogDeliveriesPerSecond is the most info lines about processed or
	// skipped deliveries written a second; the next line written counts
	// the ones held back (suppressed_since_last). Failures and retries are
	// always logged, and a Logger at debug gets every line. 0: a line for
	// every delivery. Defaults to 0.
	LogDeliveriesPerSecond int

	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

func (c ClientConfig) WithDefaults() ClientConfig {
	c.Jobs = c.Jobs.WithDefaults()
	if c.FetchCooldown == 0 {
		c.FetchCooldown = 40 * time.Millisecond
	}
	if c.FollowUpFetchPollInterval == 0 {
		c.FollowUpFetchPollInterval = 5 * cmp.Or(c.FetchPollInterval, river.FetchPollIntervalDefault)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ObserveBatch == nil {
		c.ObserveBatch = func(int) {}
	}
	if c.ObserveDelivery == nil {
		c.ObserveDelivery = func(string, string, time.Duration) {}
	}
	return c
}

// deliveryWorkers is how many process_delivery jobs run at once. Batched, a
// worker mostly waits for its batch to commit, and River fetches no more jobs
// than it has free workers: with MaxWorkers alone, one batch would hold every
// worker and the next fetch would wait for its commit. Workers for twice the
// batch slots keep a full batch waiting for each slot that frees: with only
// enough to fill the slots, a slot that freed waited for River's next fetch
// (FetchCooldown, 40ms), and on a backlog the machine sat partly idle. Under
// moderate load fetches are small and nothing changes (bench/README.md,
// Design decisions, "River fetching and polling").
func deliveryWorkers(cfg ClientConfig) int {
	if cfg.BatchSize > 1 {
		return max(cfg.MaxWorkers, 2*cfg.BatchSize*processBatchSlots)
	}
	return cfg.MaxWorkers
}

// reindexedIndexes is River's default reindexer list without the indexes
// migration 014 drops (riverdb.DroppedIndexes).
func reindexedIndexes() []string {
	return slices.DeleteFunc(river.ReindexerIndexNamesDefault(), func(name string) bool {
		return slices.Contains(riverdb.DroppedIndexes, name)
	})
}

// NewClient builds the River client with every hookinbox worker registered.
func NewClient(pool *pgxpool.Pool, cfg ClientConfig) (*river.Client[pgx.Tx], error) {
	cfg = cfg.WithDefaults()
	rc := &river.Config{Logger: cfg.Logger, JobTimeout: cfg.Timeout.Std(), RescueStuckJobsAfter: cfg.RescueStuckAfter.Std(),
		CompletedJobRetentionPeriod: cfg.RiverCompletedRetention,
		CancelledJobRetentionPeriod: cfg.RiverCancelledRetention,
		DiscardedJobRetentionPeriod: cfg.RiverDiscardedRetention, MaxAttempts: cfg.MaxAttempts, RetryPolicy: cfg.RetryPolicy, FetchPollInterval: cfg.FetchPollInterval, FetchCooldown: cfg.FetchCooldown,
		ReindexerIndexNames: reindexedIndexes(), Middleware: slices.Clone(cfg.Middleware)}
	if !cfg.InsertOnly {
		if cfg.Registry == nil {
			return nil, errors.New("jobs: ClientConfig.Registry is required to work jobs")
		}
		workers := river.NewWorkers()
		deliveryWorker := newProcessDeliveryWorker(pool, cfg)
		if err := river.AddWorkerSafely(workers, deliveryWorker); err != nil {
			return nil, err
		}
		if err := river.AddWorkerSafely(workers, newProcessDeliveriesWorker(deliveryWorker, cfg)); err != nil {
			return nil, err
		}
		if err := river.AddWorkerSafely(workers, newBulkReplayWorker(pool, cfg.Timeout.Std()*2/3, cfg.Logger)); err != nil {
			return nil, err
		}
		if err := cfg.Registry.AddWorkersTo(workers); err != nil {
			return nil, err
		}
		if cfg.AddWorkers != nil {
			if err := cfg.AddWorkers(workers); err != nil {
				return nil, err
			}
		}
		rc.PeriodicJobs = slices.Concat(cfg.PeriodicJobs, cfg.Registry.PeriodicJobs())
		if cfg.Retention != nil {
			if err := river.AddWorkerSafely(workers, NewRetentionWorker(pool, *cfg.Retention, cfg.Timeout.Std()*2/3, cfg.Logger)); err != nil {
				return nil, err
			}
			rc.PeriodicJobs = append(rc.PeriodicJobs, retentionPeriodicJob(cfg.RetentionEvery))
			partitions := &inboxPartitionsWorker{pool: pool, cfg: cfg.Retention.WithDefaults(), logger: cfg.Logger}
			if err := river.AddWorkerSafely(workers, partitions); err != nil {
				return nil, err
			}
			rc.PeriodicJobs = append(rc.PeriodicJobs, inboxPartitionsPeriodicJob())
		}
		if cfg.OrphanSweep != nil {
			sweep := *cfg.OrphanSweep
			if sweep.Grace == 0 {
				sweep.Grace = cfg.OrphanGrace.Std()
			}
			sweeper := NewOrphanSweeper(pool, sweep)
			if err := river.AddWorkerSafely(workers, newOrphanSweepWorker(sweeper, cfg.Logger)); err != nil {
				return nil, err
			}
			rc.PeriodicJobs = append(rc.PeriodicJobs, orphanSweepPeriodicJob(sweeper.cfg.Every))
		}
		rc.Workers = workers
		if cfg.Generation != nil {
			rc.Middleware = append(rc.Middleware, cfg.Generation.Middleware())
		}
		queues, err := queueConfigs(cfg)
		if err != nil {
			return nil, err
		}
		rc.Queues = queues
	}
	client, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, err
	}
	if cfg.Generation != nil && !cfg.InsertOnly {
		cfg.Generation.attach(client.Queues(), queueDeliveries, rc.Queues[queueDeliveries])
	}
	return client, nil
}

// queueConfigs is the queues a working client runs: the deliveries at
// FetchPollInterval (River's client-wide setting), every other queue at
// FollowUpFetchPollInterval. cfg has its defaults.
func queueConfigs(cfg ClientConfig) (map[string]river.QueueConfig, error) {
	followUp := func(workers int) river.QueueConfig {
		return river.QueueConfig{MaxWorkers: workers, FetchPollInterval: cfg.FollowUpFetchPollInterval}
	}
	queues := map[string]river.QueueConfig{
		queueDeliveries:          {MaxWorkers: deliveryWorkers(cfg)},
		handlers.QueueDownstream: followUp(cfg.MaxWorkers),
		river.QueueDefault:       followUp(cfg.MaxWorkers),
	}
	for name, workers := range cfg.Registry.Queues() {
		if _, taken := queues[name]; taken {
			return nil, fmt.Errorf("jobs: queue %q is hookinbox's own", name)
		}
		queues[name] = followUp(workers)
	}
	return queues, nil
}
