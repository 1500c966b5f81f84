package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// retired is what retirePartitions did, and the ids it leaves to them.
type retired struct {
	partitions int64 // partitions dropped
	rows       int64 // deliveries they held
	// skipFrom and skipTo bound the closed partitions that are not
	// expired yet: they will be dropped whole, so the batched deletes of
	// the longest retention leave their rows alone. Equal when none.
	skipFrom, skipTo int64
}

// retirePartitions drops every closed partition (all its ids taken) whose
// deliveries are all past cutoff, the longest retention, and finished: no
// pending or failed one, none without an outcome, no follow-up work
// unfinished. A partition that holds such a delivery stays, and the
// batched deletes take its other rows.
func (w *RetentionWorker) retirePartitions(ctx context.Context, cutoff time.Time) (retired, error) {
	var res retired
	if err := w.dropDetached(ctx); err != nil {
		return res, err
	}
	parts, err := listPartitions(ctx, w.pool)
	if err != nil {
		return res, err
	}
	next, err := nextInboxID(ctx, w.pool)
	if err != nil {
		return res, err
	}
	for _, p := range parts {
		if p.hi > next {
			break // still taking ids
		}
		newest, has, err := newestReceived(ctx, w.pool, p.name)
		if err != nil {
			return res, err
		}
		if !has {
			continue // empty: nothing to retire, and no lock worth taking
		}
		if !newest.Before(cutoff) {
			if res.skipFrom == res.skipTo {
				res.skipFrom = p.lo
			}
			res.skipTo = p.hi
			continue
		}
		rows, dropped, err := w.retire(ctx, p, cutoff)
		if err != nil {
			return res, fmt.Errorf("partition %s: %w", p.name, err)
		}
		if dropped {
			res.partitions++
			res.rows += rows
		}
	}
	return res, nil
}

// retire drops the expired partition p unless a delivery of it must stay:
// holding the inbox's lock, what may have changed since p was judged is
// checked again, and p dropped. Its deliveries' keys stay until their
// generation goes (retireKeyGenerations).
func (w *RetentionWorker) retire(ctx context.Context, p partition, cutoff time.Time) (rows int64, dropped bool, err error) {
	bounds := pgx.NamedArgs{"lo": p.lo, "hi": p.hi}
	var undecided, busy bool
	if err := w.pool.QueryRow(ctx, partitionUndecidedSQL, bounds).Scan(&undecided); err != nil {
		return 0, false, err
	}
	if err := w.pool.QueryRow(ctx, partitionBusySQL, bounds).Scan(&busy); err != nil {
		return 0, false, err
	}
	if undecided || busy {
		return 0, false, nil
	}
	if err := w.pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{p.name}.Sanitize()).Scan(&rows); err != nil {
		return 0, false, err
	}
	for attempt := 0; attempt < 3; attempt++ {
		dropped, err = w.drop(ctx, p, cutoff)
		if !isLockTimeout(err) {
			return rows, dropped, err
		}
		w.logger.Info("retention: the inbox is busy; dropping the partition again shortly", "partition", p.name)
		if err := sleep(ctx, w.cfg.Pause); err != nil {
			return 0, false, err
		}
	}
	return 0, false, nil
}

// drop takes the inbox's lock, checks p once more, detaches it and, the
// lock released, drops it. An insert that took an id of p before p was
// judged and commits only now is seen here, after the lock: the lock
// waits for its transaction.
func (w *RetentionWorker) drop(ctx context.Context, p partition, cutoff time.Time) (dropped bool, err error) {
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE inbox, inbox_outcome IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		newest, has, err := newestReceived(ctx, tx, p.name)
		if err != nil || (has && !newest.Before(cutoff)) {
			return err
		}
		var busy bool
		if err := tx.QueryRow(ctx, partitionBusySQL, pgx.NamedArgs{"lo": p.lo, "hi": p.hi}).Scan(&busy); err != nil || busy {
			return err
		}
		if _, err := tx.Exec(ctx, partitionReplaysDeleteSQL, pgx.NamedArgs{"lo": p.lo, "hi": p.hi}); err != nil {
			return err
		}
		// Detached now, dropped after the lock is released: a drop frees
		// the partition's files as it commits, and ingest would wait for
		// that behind the lock.
		if err := detach(ctx, tx, "inbox", p.name); err != nil {
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
	return true, w.dropDetached(ctx)
}

// detachedComment marks a partition drop detached, so that only those are
// dropped after, never a table that merely has a partition's name.
const detachedComment = "hookinbox: a retired inbox partition, detached to be dropped"

// dropDetached drops the partitions detached from the inbox: the one a
// drop just detached, or any a stopped process left.
func (w *RetentionWorker) dropDetached(ctx context.Context) error {
	rows, err := w.pool.Query(ctx, partitionDetachedListSQL, detachedComment)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := w.pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
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
