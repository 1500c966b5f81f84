package inbox

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Retired is what Retire did, and the ids it leaves to it.
type Retired struct {
	Partitions int64 // partitions dropped
	Rows       int64 // deliveries they held
	// SkipFrom and SkipTo bound the closed partitions that are not
	// expired yet: they will be dropped whole, so the batched deletes of
	// the longest retention leave their rows alone. Equal when none.
	SkipFrom, SkipTo int64
}

// Retire drops every closed partition (all its ids taken) whose
// deliveries are all past cutoff, the longest retention, and finished: no
// pending or failed one, none without an outcome, none Busy. A partition
// that holds such a delivery stays, and retention's batched deletes take
// its other rows. The deliveries' keys stay until their generation goes
// (RetireKeyGenerations).
func (ps *Partitions) Retire(ctx context.Context, cutoff time.Time) (Retired, error) {
	var res Retired
	if err := ps.dropDetached(ctx); err != nil {
		return res, err
	}
	parts, err := listPartitions(ctx, ps.Pool)
	if err != nil {
		return res, err
	}
	next, err := nextInboxID(ctx, ps.Pool)
	if err != nil {
		return res, err
	}
	for _, p := range parts {
		if p.Hi > next {
			break // still taking ids
		}
		newest, has, err := newestReceived(ctx, ps.Pool, p.Name)
		if err != nil {
			return res, err
		}
		if !has {
			continue // empty: nothing to retire, and no lock worth taking
		}
		if !newest.Before(cutoff) {
			if res.SkipFrom == res.SkipTo {
				res.SkipFrom = p.Lo
			}
			res.SkipTo = p.Hi
			continue
		}
		rows, dropped, err := ps.retire(ctx, p, cutoff)
		if err != nil {
			return res, fmt.Errorf("partition %s: %w", p.Name, err)
		}
		if dropped {
			res.Partitions++
			res.Rows += rows
		}
	}
	return res, nil
}

// busy asks Busy, when set.
func (ps *Partitions) busy(ctx context.Context, q Querier, p Partition) (bool, error) {
	if ps.Busy == nil {
		return false, nil
	}
	return ps.Busy(ctx, q, p.Lo, p.Hi)
}

// retire drops the expired partition p unless a delivery of it must stay:
// holding the inbox's lock, what may have changed since p was judged is
// checked again, and p dropped.
func (ps *Partitions) retire(ctx context.Context, p Partition, cutoff time.Time) (rows int64, dropped bool, err error) {
	var undecided bool
	if err := ps.Pool.QueryRow(ctx, partitionUndecidedSQL, pgx.NamedArgs{"lo": p.Lo, "hi": p.Hi}).Scan(&undecided); err != nil {
		return 0, false, err
	}
	busy, err := ps.busy(ctx, ps.Pool, p)
	if err != nil {
		return 0, false, err
	}
	if undecided || busy {
		return 0, false, nil
	}
	if err := ps.Pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{p.Name}.Sanitize()).Scan(&rows); err != nil {
		return 0, false, err
	}
	for attempt := 0; attempt < 3; attempt++ {
		dropped, err = ps.drop(ctx, p, cutoff)
		if !IsLockTimeout(err) {
			return rows, dropped, err
		}
		ps.logger().Info("retention: the inbox is busy; dropping the partition again shortly", "partition", p.Name)
		if err := sleep(ctx, ps.Pause); err != nil {
			return 0, false, err
		}
	}
	return 0, false, nil
}

// drop takes the inbox's lock, checks p once more, detaches it and, the
// lock released, drops it. An insert that took an id of p before p was
// judged and commits only now is seen here, after the lock: the lock
// waits for its transaction.
func (ps *Partitions) drop(ctx context.Context, p Partition, cutoff time.Time) (dropped bool, err error) {
	err = pgx.BeginFunc(ctx, ps.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+ps.lockTimeout()+"'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE inbox, inbox_outcome IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		newest, has, err := newestReceived(ctx, tx, p.Name)
		if err != nil || (has && !newest.Before(cutoff)) {
			return err
		}
		if busy, err := ps.busy(ctx, tx, p); err != nil || busy {
			return err
		}
		if ps.Dropping != nil {
			if err := ps.Dropping(ctx, tx, p.Lo, p.Hi); err != nil {
				return err
			}
		}
		// Detached now, dropped after the lock is released: a drop frees
		// the partition's files as it commits, and ingest would wait for
		// that behind the lock.
		if err := detach(ctx, tx, "inbox", p.Name); err != nil {
			return err
		}
		if err := detach(ctx, tx, "inbox_outcome", p.outcomeName()); err != nil {
			return err
		}
		dropped = true
		return nil
	})
	if err != nil || !dropped {
		return false, err
	}
	return true, ps.dropDetached(ctx)
}

// DetachedComment marks a partition a drop detached, so that only those
// are dropped after, never a table that merely has a partition's name.
const DetachedComment = "hookinbox: a retired inbox partition, detached to be dropped"

// detach detaches table from parent and marks it to be dropped once the
// lock is released (dropDetached).
func detach(ctx context.Context, tx pgx.Tx, parent, table string) error {
	name := pgx.Identifier{table}.Sanitize()
	if _, err := tx.Exec(ctx, "ALTER TABLE "+parent+" DETACH PARTITION "+name); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, "COMMENT ON TABLE "+name+" IS '"+DetachedComment+"'")
	return err
}

// dropDetached drops the partitions detached from the inbox: the one a
// drop just detached, or any a stopped process left.
func (ps *Partitions) dropDetached(ctx context.Context) error {
	rows, err := ps.Pool.Query(ctx, partitionDetachedListSQL, DetachedComment)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := ps.Pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("drop detached partition %s: %w", name, err)
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
