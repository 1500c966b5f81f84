package inbox

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
	//go:embed sql/partition_detached_list.sql
	partitionDetachedListSQL string
)

// Partitions is the inbox's lifecycle: it makes the inbox's partitions and
// key generations ahead of the ids that go to them, and drops them whole
// once retention is done with them (the package comment says what each
// holds). One process in the cluster runs it at a time: jobs runs it from
// River's leader (the inbox_partitions and retention jobs).
type Partitions struct {
	Pool *pgxpool.Pool
	// Span is how much traffic one partition is made for: the next one
	// spans as many ids as the inbox took in the last Span
	// (jobs.RetentionConfig.PartitionSpan).
	Span time.Duration
	// MinIDs is the fewest ids a new partition spans.
	MinIDs int64
	// KeyGeneration is how long one generation of keys takes new keys
	// before the next one opens.
	KeyGeneration time.Duration
	// LockTimeout bounds how long making or dropping a partition or a key
	// generation waits for the inbox's lock, as PostgreSQL's lock_timeout
	// reads it. Ingest queues behind a waiting exclusive lock, so the wait
	// is short; a busy inbox is tried again later (IsLockTimeout). Defaults
	// to 500ms.
	LockTimeout string
	// FenceTimeout bounds how long opening a key generation waits for the
	// key generations' fence, which waits for the inserts in flight.
	// Defaults to LockTimeout.
	FenceTimeout string
	// Pause is the rest between a partition drop's attempts while the inbox
	// is busy.
	Pause time.Duration
	// Logger says what was put off while the inbox was busy. nil: discard.
	Logger *slog.Logger
	// Busy reports whether the deliveries with ids in [lo, hi) have work
	// left outside the inbox (a job, a handler's step, a send): a partition
	// that holds one is not dropped. Asked before a drop, and again in the
	// drop's transaction, while the inbox is locked: it must read only what
	// is small. nil: none ever has.
	Busy func(ctx context.Context, q Querier, lo, hi int64) (bool, error)
	// Dropping runs in a partition drop's transaction, under the inbox's
	// lock, before the partition is detached: for another table's rows that
	// live and die with the partition's deliveries. nil: none.
	Dropping func(ctx context.Context, tx pgx.Tx, lo, hi int64) error
}

const defaultLockTimeout = "500ms"

func (ps *Partitions) lockTimeout() string { return cmpOr(ps.LockTimeout, defaultLockTimeout) }

func (ps *Partitions) fenceTimeout() string { return cmpOr(ps.FenceTimeout, ps.lockTimeout()) }

func (ps *Partitions) logger() *slog.Logger {
	if ps.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return ps.Logger
}

func cmpOr(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// IsLockTimeout reports whether err is a lock wait that ran out (the
// inbox was busy): no error of the inbox, to be tried again later.
func IsLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// Partition is one range partition of the inbox, and of inbox_outcome
// beside it: the deliveries with ids in [Lo, Hi) (migration 026).
type Partition struct {
	Name   string // inbox_p<lo>
	Lo, Hi int64
}

func (p Partition) outcomeName() string {
	return "inbox_outcome_" + strings.TrimPrefix(p.Name, "inbox_")
}

// listPartitions returns the inbox's range partitions by ascending ids.
func listPartitions(ctx context.Context, q Querier) ([]Partition, error) {
	rows, err := q.Query(ctx, partitionListSQL)
	if err != nil {
		return nil, err
	}
	var parts []Partition
	for rows.Next() {
		var p Partition
		var lo, hi string
		if err := rows.Scan(&p.Name, &lo, &hi); err != nil {
			return nil, err
		}
		if p.Lo, err = parseBound(lo); err == nil {
			p.Hi, err = parseBound(hi)
		}
		if err != nil {
			return nil, fmt.Errorf("partition %s: %w", p.Name, err)
		}
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(parts, func(a, b Partition) int { return cmpInt64(a.Lo, b.Lo) })
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

func nextInboxID(ctx context.Context, q Querier) (int64, error) {
	var next int64
	err := q.QueryRow(ctx, partitionNextIDSQL).Scan(&next)
	return next, err
}

// newestReceived is when the partition's newest delivery arrived; ok is
// false when it holds none. It reads the partition by name, so its own
// received_at index answers.
func newestReceived(ctx context.Context, q Querier, table string) (t time.Time, ok bool, err error) {
	var newest *time.Time
	if err := q.QueryRow(ctx, "SELECT max(received_at) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&newest); err != nil {
		return time.Time{}, false, err
	}
	if newest == nil {
		return time.Time{}, false, nil
	}
	return *newest, true, nil
}

// Ensure makes the inbox's next partition once the newest one is half
// taken. The new one spans the ids the inbox took in the last Span (at
// least MinIDs), so a partition holds about a span of traffic. It returns
// the partition made, if any.
func (ps *Partitions) Ensure(ctx context.Context, now time.Time) (*Partition, error) {
	pool := ps.Pool
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
	var newest Partition
	for _, p := range parts {
		if p.Lo < cur.hi {
			newest = p
		}
	}
	if newest.Lo > math.MinInt64 && next < newest.Hi-(newest.Hi-newest.Lo)/2 {
		return nil, nil
	}
	width, err := ps.width(ctx, now, next)
	if err != nil {
		return nil, err
	}
	var overflowMax *int64
	if err := pool.QueryRow(ctx, partitionOverflowMaxSQL).Scan(&overflowMax); err != nil {
		return nil, err
	}
	lo := max(newest.Hi, 1)
	if overflowMax != nil {
		lo = max(lo, *overflowMax+1)
	}
	if next > lo {
		// The ids ran past the partitions into the overflow: the new one
		// starts clear of those being taken meanwhile.
		lo = next + width/10 + 1000
	}
	p := Partition{Name: "inbox_p" + strconv.FormatInt(lo, 10), Lo: lo, Hi: lo + width}
	if err := ps.create(ctx, p); err != nil {
		return nil, err
	}
	return &p, nil
}

// width is how many ids the inbox took in the last Span, next being the
// next it hands out: at least MinIDs. The ids of a span that began in an
// earlier key generation are counted in both, those of the earlier one up
// to the last it holds.
func (ps *Partitions) width(ctx context.Context, now time.Time, next int64) (int64, error) {
	pool := ps.Pool
	var first *int64
	if err := pool.QueryRow(ctx, partitionTrafficSQL, pgx.NamedArgs{"since": now.Add(-ps.Span)}).Scan(&first); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	if first == nil {
		return ps.MinIDs, nil
	}
	gens, err := listKeyGenerations(ctx, pool)
	if err != nil {
		return 0, err
	}
	cur, err := currentKeyGeneration(gens, next)
	if err != nil || *first >= cur.lo {
		return max(ps.MinIDs, next-*first), err
	}
	var last int64
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(id), $1) FROM inbox WHERE id < $2", *first, cur.lo).Scan(&last); err != nil {
		return 0, err
	}
	return max(ps.MinIDs, next-cur.lo+last+1-*first), nil
}

// create makes p, waiting LockTimeout at most for the inbox's lock.
func (ps *Partitions) create(ctx context.Context, p Partition) error {
	err := pgx.BeginFunc(ctx, ps.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+ps.lockTimeout()+"'"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT inbox_partition_create($1, $2)", p.Lo, p.Hi)
		return err
	})
	if err != nil {
		return fmt.Errorf("make partition %s [%d, %d): %w", p.Name, p.Lo, p.Hi, err)
	}
	return nil
}
