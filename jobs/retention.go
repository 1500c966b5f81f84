package jobs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

var (
	//go:embed sql/retention_idempotency.sql
	retentionIdempotencySQL string
	//go:embed sql/retention_bulk_replay.sql
	retentionBulkReplaySQL string
	//go:embed sql/retention_ingest_minute.sql
	retentionIngestMinuteSQL string
)

// minKeyGenerationAge is the youngest a key generation is when the next
// opens: the shortest inbox retention startup takes without
// allow_short_retention.
const minKeyGenerationAge = 72 * time.Hour

// ingestMinuteRetention is how long the console's per-minute ingest
// counts are kept: its charts show the last 24 h.
const ingestMinuteRetention = 48 * time.Hour

// RetentionConfig says how long rows live.
type RetentionConfig struct {
	// Inbox is each configured source's inbox retention. Required.
	Inbox map[string]time.Duration
	// Default applies to deliveries of sources no longer configured.
	// Defaults to the longest of Inbox.
	Default time.Duration
	// IdempotencyKeys is how long api_idempotency rows are kept (once
	// expired). Required.
	IdempotencyKeys time.Duration
	// BatchSize is how many rows one statement deletes. Defaults to
	// config.DefaultRetentionBatchSize (5000).
	BatchSize int
	// Pause is the rest between batches. Defaults to
	// config.DefaultRetentionPause (100ms).
	Pause time.Duration
	// Conflicts is how long the records of conflicting deliveries (409
	// delivery_id_conflict) are kept. Defaults to 7 days.
	Conflicts time.Duration
	// PartitionSpan is how much traffic one inbox partition is made for:
	// the next one spans as many ids as the inbox took in the last
	// PartitionSpan. A partition is dropped once its newest delivery is
	// past the longest retention, so deliveries live up to about this
	// much longer than their retention, and at most twice as long (should
	// traffic fall, batches delete what a partition still holds then).
	// Defaults to 24h.
	PartitionSpan time.Duration
	// PartitionMin is the fewest ids a new partition spans. Defaults to
	// 10,000.
	PartitionMin int64
	// KeyGeneration is how long one generation of the inbox's keys takes
	// new keys before the next one opens. A generation is dropped once
	// the inbox holds none of its deliveries, so a key lives its
	// delivery's retention and up to KeyGeneration longer, and ingest
	// looks a new key up in about one generation per KeyGeneration of the
	// longest retention. Defaults to the longest retention (Default),
	// and is 72h at least.
	KeyGeneration time.Duration
}

func (c RetentionConfig) WithDefaults() RetentionConfig {
	for _, d := range c.Inbox {
		c.Default = max(c.Default, d)
	}
	if c.BatchSize == 0 {
		c.BatchSize = config.DefaultRetentionBatchSize
	}
	if c.Pause == 0 {
		c.Pause = config.DefaultRetentionPause
	}
	if c.Conflicts == 0 {
		c.Conflicts = 7 * 24 * time.Hour
	}
	if c.PartitionSpan == 0 {
		c.PartitionSpan = 24 * time.Hour
	}
	if c.PartitionMin == 0 {
		c.PartitionMin = 10_000
	}
	if c.KeyGeneration == 0 {
		c.KeyGeneration = c.Default
	}
	c.KeyGeneration = max(c.KeyGeneration, minKeyGenerationAge)
	return c
}

// RetentionArgs runs one retention pass. River's leader enqueues it
// periodically, so one process in the cluster deletes at a time.
type RetentionArgs struct{}

func (RetentionArgs) Kind() string { return "retention" }

// retentionPeriodicJob schedules the pass every period, and once at start.
func retentionPeriodicJob(every time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		return RetentionArgs{}, retentionInsertOpts()
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

// retentionInsertOpts makes the pass unique while it lives: a tick while
// a pass runs, or waits to carry on (it snoozes between slices), adds
// none. Unique per period alone, a pass longer than the period (a
// backlog deleted in batches, slice after slice) would meet the next
// tick's, and the two would delete side by side.
func retentionInsertOpts() *river.InsertOpts {
	return &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// RetentionResult is what one pass did.
type RetentionResult struct {
	InboxDeleted int64 // processed/skipped deliveries past retention, dropped partitions' included
	// PartitionsDropped are inbox partitions dropped whole: every
	// delivery of each was expired and finished.
	PartitionsDropped int64
	// KeyGenerationsDropped are generations of the inbox's keys dropped
	// whole: the inbox held none of their deliveries any more.
	KeyGenerationsDropped int64
	InboxHeld             int64 // past retention but received, failed or with follow-up work unfinished: kept
	RelatedDeleted        int64 // handler steps and resource versions
	KeysDeleted           int64 // expired admin idempotency keys
	// ConflictsDeleted are records of conflicting deliveries past
	// RetentionConfig.Conflicts.
	ConflictsDeleted int64
}

// RetentionWorker deletes expired rows in batches, resting between batches
// so that it never holds long locks or starves ingest.
type RetentionWorker struct {
	river.WorkerDefaults[RetentionArgs]
	pool   *pgxpool.Pool
	cfg    RetentionConfig
	budget time.Duration // work per run before snoozing to continue
	logger *slog.Logger
}

func NewRetentionWorker(pool *pgxpool.Pool, cfg RetentionConfig, budget time.Duration, logger *slog.Logger) *RetentionWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &RetentionWorker{pool: pool, cfg: cfg.WithDefaults(), budget: budget, logger: logger}
}

func (w *RetentionWorker) Work(ctx context.Context, _ *river.Job[RetentionArgs]) error {
	start := time.Now()
	// A large backlog is deleted in slices that each fit well inside
	// River's job timeout (and so its stuck-job rescue): when the slice's
	// budget runs out the job snoozes and carries on where it stopped.
	sliceCtx, cancel := context.WithTimeout(ctx, w.budget)
	defer cancel()
	res, err := w.Run(sliceCtx, start)
	more := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
	if more {
		err = nil
	}
	w.logger.Info("retention pass", "inbox_deleted", res.InboxDeleted, "partitions_dropped", res.PartitionsDropped, "key_generations_dropped", res.KeyGenerationsDropped, "inbox_held", res.InboxHeld,
		"related_deleted", res.RelatedDeleted, "idempotency_keys_deleted", res.KeysDeleted, "conflicts_deleted", res.ConflictsDeleted,
		"duration", time.Since(start).String(), "continues", more, "error", err)
	if more {
		return river.JobSnooze(w.cfg.Pause)
	}
	return err
}

// group is a set of sources sharing a cutoff; include=false means "every
// source not in the list".
type group struct {
	sources []string
	include bool
	cutoff  time.Time
}

func (w *RetentionWorker) groups(now time.Time) []group {
	bySpan := map[time.Duration][]string{}
	all := []string{} // not nil: ANY(NULL) would match nothing
	for source, d := range w.cfg.Inbox {
		bySpan[d] = append(bySpan[d], source)
		all = append(all, source)
	}
	var gs []group
	for d, sources := range bySpan {
		sort.Strings(sources)
		gs = append(gs, group{sources: sources, include: true, cutoff: now.Add(-d)})
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].cutoff.Before(gs[j].cutoff) })
	sort.Strings(all)
	return append(gs, group{sources: all, include: false, cutoff: now.Add(-w.cfg.Default)})
}

// Run makes one pass as of now.
func (w *RetentionWorker) Run(ctx context.Context, now time.Time) (RetentionResult, error) {
	var res RetentionResult
	longest := now.Add(-w.cfg.Default)
	// A partition that cannot be retired leaves its rows to the batches
	// below, which go on: the error is returned once they have run.
	lifecycle := partitions(w.pool, w.cfg, w.logger)
	parts, partsErr := lifecycle.Retire(ctx, longest)
	res.PartitionsDropped, res.InboxDeleted = parts.Partitions, parts.Rows
	if partsErr != nil {
		partsErr = fmt.Errorf("retention: inbox partitions: %w", partsErr)
		w.logger.Error("retention: inbox partitions", "error", partsErr)
	}
	for _, g := range w.groups(now) {
		x := riverdb.Expired{Cutoff: g.cutoff, Sources: g.sources, Include: g.include, Batch: w.cfg.BatchSize,
			SkipAfter: longest.Add(-2 * w.cfg.PartitionSpan)}
		if !g.cutoff.After(longest) {
			x.SkipFrom, x.SkipTo = parts.SkipFrom, parts.SkipTo
		}
		n, err := w.loop(ctx, func() (int64, error) { return riverdb.DeleteExpiredDeliveries(ctx, w.pool, x) })
		res.InboxDeleted += n
		if err != nil {
			return res, fmt.Errorf("retention: inbox: %w", err)
		}
		held, err := riverdb.CountHeldDeliveries(ctx, w.pool, x)
		if err != nil {
			return res, fmt.Errorf("retention: count held rows: %w", err)
		}
		res.InboxHeld += held
		if n, err = w.loop(ctx, func() (int64, error) { return riverdb.DeleteExpiredRelated(ctx, w.pool, x) }); err != nil {
			return res, fmt.Errorf("retention: related rows: %w", err)
		}
		res.RelatedDeleted += n
	}
	n, err := w.drain(ctx, retentionIdempotencySQL, pgx.NamedArgs{"cutoff": now.Add(-w.cfg.IdempotencyKeys), "batch": w.cfg.BatchSize})
	res.KeysDeleted = n
	if err != nil {
		return res, fmt.Errorf("retention: idempotency keys: %w", err)
	}
	if _, err := w.pool.Exec(ctx, retentionBulkReplaySQL, pgx.NamedArgs{"cutoff": now.Add(-w.cfg.Default)}); err != nil {
		return res, fmt.Errorf("retention: bulk replays: %w", err)
	}
	if _, err := w.pool.Exec(ctx, retentionIngestMinuteSQL, pgx.NamedArgs{"cutoff": now.Add(-ingestMinuteRetention)}); err != nil {
		return res, fmt.Errorf("retention: ingest counts: %w", err)
	}
	n, err = w.loop(ctx, func() (int64, error) {
		return inbox.DeleteExpiredConflicts(ctx, w.pool, now.Add(-w.cfg.Conflicts), w.cfg.BatchSize)
	})
	res.ConflictsDeleted = n
	if err != nil {
		return res, fmt.Errorf("retention: conflicts: %w", err)
	}
	res.KeyGenerationsDropped, err = lifecycle.RetireKeyGenerations(ctx)
	if err != nil {
		return res, fmt.Errorf("retention: key generations: %w", err)
	}
	return res, partsErr
}

// drain repeats a batched DELETE until a batch comes back short.
func (w *RetentionWorker) drain(ctx context.Context, sql string, args pgx.NamedArgs) (int64, error) {
	return w.loop(ctx, func() (int64, error) {
		tag, err := w.pool.Exec(ctx, sql, args)
		return tag.RowsAffected(), err
	})
}

// loop repeats a batch until it comes back short.
func (w *RetentionWorker) loop(ctx context.Context, batch func() (int64, error)) (int64, error) {
	var total int64
	for {
		n, err := batch()
		total += n
		if err != nil || n < int64(w.cfg.BatchSize) {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(w.cfg.Pause):
		}
	}
}
