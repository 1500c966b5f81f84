package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

// The statements around a delivery's handlers travel together, one round
// trip before them and one after: in the steady benchmark a processing
// batch spent most of its time on round trips, six per delivery (a
// savepoint, the lock, the version read, the handlers, the version upsert,
// the release; bench/README.md, Design decisions, "Processing batches").
// PostgreSQL runs a pipeline's statements in order, each with a snapshot
// of its own, so the version is read after the lock is held, as before.

// deliverySavepoint is the savepoint of one delivery in a processing
// batch: its handlers' work rolls back alone. One at a time per batch
// transaction, so one name does.
const deliverySavepoint = "hookinbox_delivery"

// lockKey names a delivery's resource lock: its resource, or the delivery
// itself when it names none (so two jobs for one delivery, a replay
// racing the original, still never run at once). Length-prefixed so no
// source/key pair can spell another's.
func lockKey(d Delivery, r Resource) string {
	if r.Key != "" {
		return fmt.Sprintf("r:%d:%s:%s", len(d.Source), d.Source, r.Key)
	}
	return fmt.Sprintf("d:%d:%s:%s", len(d.Source), d.Source, d.DeliveryID)
}

// begin locks d's resource and reads its version, in one round trip.
// Unless wait, a resource another transaction holds is a
// *ResourceBusyError (the version read then means nothing).
func begin(ctx context.Context, tx pgx.Tx, d Delivery, r Resource, wait bool) (stale bool, err error) {
	b := &pgx.Batch{}
	key := lockKey(d, r)
	if wait {
		b.Queue(resourceLockSQL, pgnamed.Args{"lock_key": key})
	} else {
		b.Queue(resourceTryLockSQL, pgnamed.Args{"lock_key": key})
	}
	readVersion := r.Key != ""
	if readVersion {
		b.Queue(resourceVersionGetSQL, pgnamed.Args{"source": d.Source, "resource_key": r.Key})
	}
	res := tx.SendBatch(ctx, b)
	stale, err = readBegin(res, r, readVersion, key, wait)
	if cerr := res.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return stale, err
}

func readBegin(res pgx.BatchResults, r Resource, readVersion bool, key string, wait bool) (stale bool, err error) {
	if err := readLock(res, r, key, wait); err != nil {
		return false, err
	}
	if !readVersion {
		return false, nil
	}
	var v Version
	err = res.QueryRow().Scan(&v.At, &v.ReceivedAt, &v.ReceiptAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read resource version: %w", err)
	}
	return r.OlderThan(v), nil
}

// readLock reads begin's lock statement.
func readLock(res pgx.BatchResults, r Resource, key string, wait bool) error {
	if wait {
		if _, err := res.Exec(); err != nil {
			return fmt.Errorf("lock resource %q: %w", r.Key, err)
		}
		return nil
	}
	var locked bool
	if err := res.QueryRow().Scan(&locked); err != nil {
		return fmt.Errorf("lock resource %q: %w", r.Key, err)
	}
	if !locked {
		return &ResourceBusyError{LockKey: key}
	}
	return nil
}

// end runs the handlers' deferred statements, writes their deferred rows
// and records the resource's new version, in one round trip.
func end(ctx context.Context, tx pgx.Tx, d Delivery, r Resource, deferred deferredWork) error {
	b := &pgx.Batch{QueuedQueries: endQueries(d, r, deferred)}
	if b.Len() == 0 {
		return nil
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("close the delivery's work (deferred statements, resource version): %w", err)
	}
	return nil
}

// endQueries are end's statements, deferred ones first, then the rows.
func endQueries(d Delivery, r Resource, deferred deferredWork) []*pgx.QueuedQuery {
	b := &pgx.Batch{QueuedQueries: deferred.stmts}
	var rows rowGroups // this delivery's alone: a batch writes all of its at once
	rows.add(deferred.rows)
	rows.queue(b)
	var v batchVersions // one row: the statements a batch sends for all of its
	v.add(d, r)
	v.queue(b)
	return b.QueuedQueries
}

// rollback undoes a delivery's work in its savepoint, after its handlers
// failed (the transaction may be aborted: ROLLBACK TO works there).
func rollback(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT "+deliverySavepoint+"; RELEASE SAVEPOINT "+deliverySavepoint)
	return err
}

// batchTx is the transaction a batched delivery's handlers see: the
// batch's, inside the delivery's savepoint. The batch commits or rolls it
// back, never a handler.
type batchTx struct{ pgx.Tx }

var errHandlerEndsTx = errors.New("handlers: a handler must not commit or roll back its Event.Tx")

func (batchTx) Commit(context.Context) error   { return errHandlerEndsTx }
func (batchTx) Rollback(context.Context) error { return errHandlerEndsTx }
