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
	var filled float64 // seconds between its first delivery and its last
	if err := w.pool.QueryRow(ctx, "SELECT count(*), coalesce(extract(epoch FROM max(received_at) - min(received_at)), 0)::float8 FROM "+
		pgx.Identifier{p.name}.Sanitize()).Scan(&rows, &filled); err != nil {
		return 0, false, err
	}
	pace := keyPace(rows, time.Duration(filled*float64(time.Second)))
	for attempt := 0; attempt < 3; attempt++ {
		dropped, err = w.drop(ctx, p, cutoff, pace)
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

// minKeyPace is the slowest pace, in keys a second, for a dropped
// partition's keys: a small or slowly filled partition's keys go within
// minutes or hours, not days.
const minKeyPace = 100

// maxKeyPace bounds the pace of a partition filled in a moment. Between
// windows the deletes still rest RetentionConfig.Pause at least.
const maxKeyPace = 1_000_000

// keyPace is the pace, in keys a second, for the keys of a dropped
// partition of n deliveries received over filled: twice the rate they
// came in. They need no hurry (their deliveries are gone, and a resend of
// one is answered as a duplicate until its key goes), so they are spread
// beside ingest rather than in its way; but partitions are dropped about
// as often as they filled, so the keys of each must go faster than they
// came, or the table grows without end. At twice the rate they go in half
// the time their partition took to fill.
func keyPace(n int64, filled time.Duration) int32 {
	if filled <= 0 {
		return maxKeyPace
	}
	pace := 2 * float64(n) / filled.Seconds()
	return int32(min(max(pace, minKeyPace), maxKeyPace))
}

// keyRest is how long to rest after deleting n keys in took, so that the
// deletes keep to pace keys a second: at least pause.
func keyRest(n int64, took, pause time.Duration, pace int32) time.Duration {
	return max(pause, time.Duration(n)*time.Second/time.Duration(pace)-took)
}

// retiredRange is a dropped partition's ids whose keys are still to be
// deleted: [Next, Hi), at Pace keys a second.
type retiredRange struct {
	Lo, Hi, Next int64
	Pace         int32
}

// deleteRetiredKeys deletes the keys of every dropped partition, a window
// of partitionKeyBatch ids at a time, resting after each that deleted any
// (keyRest, at the pace its drop set), and forgets each range once its
// keys are gone. A pass cut short leaves the rest to the next, from the
// window it stopped at.
func (w *RetentionWorker) deleteRetiredKeys(ctx context.Context) (int64, error) {
	rows, err := w.pool.Query(ctx, partitionRetiredListSQL)
	if err != nil {
		return 0, err
	}
	ranges, err := pgx.CollectRows(rows, pgx.RowToStructByPos[retiredRange])
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
			if err := sleep(ctx, keyRest(n, time.Since(start), w.cfg.Pause, r.Pace)); err != nil {
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
func (w *RetentionWorker) drop(ctx context.Context, p partition, cutoff time.Time, pace int32) (dropped bool, err error) {
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
		if _, err := tx.Exec(ctx, "INSERT INTO inbox_retired (lo, hi, next, keys_per_second) VALUES ($1, $2, $3, $4)", p.lo, last+1, first, pace); err != nil {
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
