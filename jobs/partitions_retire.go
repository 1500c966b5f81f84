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
// checked again, and p dropped. Its keys are deleted afterwards
// (deleteRetiredKeys): until the drop commits, every delivery keeps its key.
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

// partitionKeyBatch bounds a batch of a dropped partition's keys.
const partitionKeyBatch = 1000

// partitionKeyRate paces the deletes of dropped partitions' keys, in keys
// a second. They need no hurry: their deliveries are gone, and a resend of
// one is answered as a duplicate until its key goes. So they are spread
// over minutes beside ingest rather than in its way, at a rate well above
// what one day's partition needs (2,000/s is 170 million keys a day).
const partitionKeyRate = 2000

// keyRest is how long to rest after deleting n keys in took, so that the
// deletes keep to partitionKeyRate: at least pause.
func keyRest(n int64, took, pause time.Duration) time.Duration {
	return max(pause, time.Duration(n)*time.Second/partitionKeyRate-took)
}

// deleteRetiredKeys deletes the keys of every dropped partition, a window
// of partitionKeyBatch ids at a time, resting after each that deleted any
// (keyRest), and forgets each range once its keys are gone. A pass cut
// short leaves the rest to the next, from the window it stopped at.
func (w *RetentionWorker) deleteRetiredKeys(ctx context.Context) (int64, error) {
	rows, err := w.pool.Query(ctx, partitionRetiredListSQL)
	if err != nil {
		return 0, err
	}
	ranges, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Lo, Hi, Next int64 }])
	if err != nil {
		return 0, err
	}
	window := int64(min(w.cfg.BatchSize, partitionKeyBatch))
	var total int64
	for _, r := range ranges {
		for from := r.Next; from < r.Hi; from += window {
			var n int64
			args := pgx.NamedArgs{"lo": r.Lo, "from": from, "to": min(from+window, r.Hi)}
			start := time.Now()
			if err := w.pool.QueryRow(ctx, partitionKeysDeleteSQL, args).Scan(&n); err != nil {
				return total, err
			}
			total += n
			if n == 0 {
				continue // ids no delivery took (a duplicate's insert takes one too)
			}
			if err := sleep(ctx, keyRest(n, time.Since(start), w.cfg.Pause)); err != nil {
				return total, err
			}
		}
		if _, err := w.pool.Exec(ctx, "DELETE FROM inbox_retired WHERE lo = $1", r.Lo); err != nil {
			return total, err
		}
	}
	return total, nil
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
		// The keys' windows span the ids the partition holds, not its
		// bounds: the first partition's start at the lowest bigint, and a
		// new one's end where the next day's traffic was expected to.
		var first, last int64
		if err := tx.QueryRow(ctx, "SELECT min(id), max(id) FROM "+pgx.Identifier{p.name}.Sanitize()).Scan(&first, &last); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO inbox_retired (lo, hi, next) VALUES ($1, $2, $3)", p.lo, last+1, first); err != nil {
			return err
		}
		// Detached now, dropped after the lock is released: a drop frees
		// the partition's files as it commits, and ingest would wait for
		// that behind the lock.
		for _, d := range [][2]string{{"inbox", p.name}, {"inbox_outcome", p.outcomeName()}} {
			name := pgx.Identifier{d[1]}.Sanitize()
			if _, err := tx.Exec(ctx, "ALTER TABLE "+d[0]+" DETACH PARTITION "+name); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "COMMENT ON TABLE "+name+" IS '"+detachedComment+"'"); err != nil {
				return err
			}
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
