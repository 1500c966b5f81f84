package jobs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

var (
	//go:embed sql/partition_list.sql
	partitionListSQL string
	//go:embed sql/partition_next_id.sql
	partitionNextIDSQL string
	//go:embed sql/partition_traffic.sql
	partitionTrafficSQL string
	//go:embed sql/partition_overflow_max.sql
	partitionOverflowMaxSQL string
	//go:embed sql/partition_undecided.sql
	partitionUndecidedSQL string
	//go:embed sql/partition_busy.sql
	partitionBusySQL string
	//go:embed sql/partition_replays_delete.sql
	partitionReplaysDeleteSQL string
	//go:embed sql/partition_detached_list.sql
	partitionDetachedListSQL string
)

// partitionLockTimeout bounds how long making or dropping a partition
// waits for the inbox's lock. Ingest queues behind a waiting exclusive
// lock, so the wait is short; a busy inbox is tried again the next pass.
const partitionLockTimeout = "500ms"

// partition is one range partition of the inbox, and of inbox_outcome
// beside it: the deliveries with ids in [lo, hi) (migration 026).
type partition struct {
	name   string // inbox_p<lo>
	lo, hi int64
}

func (p partition) outcomeName() string {
	return "inbox_outcome_" + strings.TrimPrefix(p.name, "inbox_")
}

// listPartitions returns the inbox's range partitions by ascending ids.
func listPartitions(ctx context.Context, q querier) ([]partition, error) {
	rows, err := q.Query(ctx, partitionListSQL)
	if err != nil {
		return nil, err
	}
	var parts []partition
	for rows.Next() {
		var p partition
		var lo, hi string
		if err := rows.Scan(&p.name, &lo, &hi); err != nil {
			return nil, err
		}
		if p.lo, err = parseBound(lo); err == nil {
			p.hi, err = parseBound(hi)
		}
		if err != nil {
			return nil, fmt.Errorf("partition %s: %w", p.name, err)
		}
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(parts, func(a, b partition) int { return cmpInt64(a.lo, b.lo) })
	return parts, nil
}

// parseBound reads a bound as pg_get_expr prints it: '123', or
// MINVALUE/MAXVALUE.
func parseBound(s string) (int64, error) {
	switch s {
	case "MINVALUE":
		return math.MinInt64, nil
	case "MAXVALUE":
		return math.MaxInt64, nil
	}
	return strconv.ParseInt(strings.Trim(s, "'"), 10, 64)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func nextInboxID(ctx context.Context, q querier) (int64, error) {
	var next int64
	err := q.QueryRow(ctx, partitionNextIDSQL).Scan(&next)
	return next, err
}

// newestReceived is when the partition's newest delivery arrived; ok is
// false when it holds none. It reads the partition by name, so its own
// received_at index answers.
func newestReceived(ctx context.Context, q querier, table string) (t time.Time, ok bool, err error) {
	var newest *time.Time
	if err := q.QueryRow(ctx, "SELECT max(received_at) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&newest); err != nil {
		return time.Time{}, false, err
	}
	if newest == nil {
		return time.Time{}, false, nil
	}
	return *newest, true, nil
}

// isLockTimeout is a lock wait that ran out (lock_timeout): the inbox was
// busy, which is no error of the pass.
func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// ensurePartition makes the inbox's next partition once the newest one is
// half taken. The new one spans the ids the inbox took in the last span
// (at least min), so a partition holds about a span of traffic. It
// returns the partition made, if any.
func ensurePartition(ctx context.Context, pool *pgxpool.Pool, span time.Duration, minIDs int64, now time.Time) (*partition, error) {
	parts, err := listPartitions(ctx, pool)
	if err != nil {
		return nil, err
	}
	next, err := nextInboxID(ctx, pool)
	if err != nil {
		return nil, err
	}
	// A partition made ahead for the next key generation's first ids is
	// not the newest until that generation opens: should opening it fail
	// for a while, the current generation still gets its next partition.
	gens, err := listKeyGenerations(ctx, pool)
	if err != nil {
		return nil, err
	}
	cur, err := currentKeyGeneration(gens, next)
	if err != nil {
		return nil, err
	}
	var newest partition
	for _, p := range parts {
		if p.lo < cur.hi {
			newest = p
		}
	}
	if newest.lo > math.MinInt64 && next < newest.hi-(newest.hi-newest.lo)/2 {
		return nil, nil
	}
	width, err := partitionWidth(ctx, pool, span, minIDs, now, next)
	if err != nil {
		return nil, err
	}
	var overflowMax *int64
	if err := pool.QueryRow(ctx, partitionOverflowMaxSQL).Scan(&overflowMax); err != nil {
		return nil, err
	}
	lo := max(newest.hi, 1)
	if overflowMax != nil {
		lo = max(lo, *overflowMax+1)
	}
	if next > lo {
		// The ids ran past the partitions into the overflow: the new one
		// starts clear of those being taken meanwhile.
		lo = next + width/10 + 1000
	}
	p := partition{name: "inbox_p" + strconv.FormatInt(lo, 10), lo: lo, hi: lo + width}
	if err := createPartition(ctx, pool, p); err != nil {
		return nil, err
	}
	return &p, nil
}

// partitionWidth is how many ids the inbox took in the last span, next
// being the next it hands out: at least minIDs. The ids of a span that
// began in an earlier key generation are counted in both, those of the
// earlier one up to the last it holds.
func partitionWidth(ctx context.Context, pool *pgxpool.Pool, span time.Duration, minIDs int64, now time.Time, next int64) (int64, error) {
	var first *int64
	if err := pool.QueryRow(ctx, partitionTrafficSQL, pgx.NamedArgs{"since": now.Add(-span)}).Scan(&first); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	if first == nil {
		return minIDs, nil
	}
	gens, err := listKeyGenerations(ctx, pool)
	if err != nil {
		return 0, err
	}
	cur, err := currentKeyGeneration(gens, next)
	if err != nil || *first >= cur.lo {
		return max(minIDs, next-*first), err
	}
	var last int64
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(id), $1) FROM inbox WHERE id < $2", *first, cur.lo).Scan(&last); err != nil {
		return 0, err
	}
	return max(minIDs, next-cur.lo+last+1-*first), nil
}

// createPartition makes p, waiting partitionLockTimeout at most for the
// inbox's lock.
func createPartition(ctx context.Context, pool *pgxpool.Pool, p partition) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT inbox_partition_create($1, $2)", p.lo, p.hi)
		return err
	})
	if err != nil {
		return fmt.Errorf("make partition %s [%d, %d): %w", p.name, p.lo, p.hi, err)
	}
	return nil
}

// inboxPartitionsArgs opens the next generation of the inbox's keys and
// makes the inbox's next partition, each when it is due.
// River's leader enqueues it every minute.
type inboxPartitionsArgs struct{}

func (inboxPartitionsArgs) Kind() string { return "inbox_partitions" }

func inboxPartitionsPeriodicJob() *river.PeriodicJob {
	const every = time.Minute
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		return inboxPartitionsArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: every}}
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

type inboxPartitionsWorker struct {
	river.WorkerDefaults[inboxPartitionsArgs]
	pool   *pgxpool.Pool
	cfg    RetentionConfig
	logger *slog.Logger
}

func (w *inboxPartitionsWorker) Work(ctx context.Context, _ *river.Job[inboxPartitionsArgs]) error {
	if w.logger == nil {
		w.logger = slog.New(slog.DiscardHandler)
	}
	now := time.Now()
	g, genErr := openKeyGeneration(ctx, w.pool, w.cfg.KeyGeneration, w.cfg.PartitionSpan, w.cfg.PartitionMin, now, partitionLockTimeout)
	if isLockTimeout(genErr) {
		w.logger.Info("inbox partitions: the inbox is busy; opening the next key generation next minute", "error", genErr)
		genErr = nil
	}
	if g != nil {
		w.logger.Info("inbox key generation opened", "generation", g.name(), "from_id", g.lo, "to_id", g.hi)
	}
	// The next partition is made all the same: ingest needs it first.
	p, err := ensurePartition(ctx, w.pool, w.cfg.PartitionSpan, w.cfg.PartitionMin, now)
	if isLockTimeout(err) {
		w.logger.Info("inbox partitions: the inbox is busy; trying again next minute", "error", err)
		err = nil
	}
	if p != nil {
		w.logger.Info("inbox partition made", "partition", p.name, "from_id", p.lo, "to_id", p.hi)
	}
	return errors.Join(genErr, err)
}
