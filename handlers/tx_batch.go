package handlers

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ProcessBatch processes ds in order in tx, one processing batch: each
// delivery as Process does, but under a savepoint of its own, so that an
// error rolls back that delivery's work alone, and without waiting for a
// resource another transaction holds, which could deadlock two batches. Every
// delivery's resource lock and version is taken in one round trip for the
// whole batch; the statements that close a delivery's work (its handlers'
// Event.Defer writes, the release of its savepoint) travel with a later round
// trip, and every delivery's new resource version is recorded at once at the
// end. In the steady benchmark round trips were most of serve's CPU and of a
// batch's length (bench/README.md, Design decisions, "Processing batches").
//
// errs[i] is delivery i's own failure (its work rolled back alone), or
// ErrResourceBusy when it must be processed alone: another transaction
// holds its resource, or an earlier delivery of ds has the same resource
// (it must see the version that one leaves, which it is not read against
// here). The error is the batch's: a statement one delivery carried into a
// later round trip failed, so the transaction must not commit. As with
// Process, the caller commits tx together with the outcomes and the jobs'
// completions.
func (r *Registry) ProcessBatch(ctx context.Context, tx pgx.Tx, jobs JobInserter, ds []Delivery) (results []Result, errs []error, err error) {
	b := &txBatch{r: r, tx: tx}
	results, errs, err = b.processAll(ctx, jobs, ds)
	if err != nil {
		return nil, nil, err
	}
	if err := b.flush(ctx); err != nil {
		return nil, nil, err
	}
	return results, errs, nil
}

// txBatch is one ProcessBatch's state: the statements the deliveries so
// far carry into the next round trip, and the resource versions to record
// at the end.
type txBatch struct {
	r        *Registry
	tx       pgx.Tx
	carry    []*pgx.QueuedQuery
	versions batchVersions // sent by flush only
}

// flush sends what the last delivery left to send, and the new versions
// of every processed delivery's resource.
func (b *txBatch) flush(ctx context.Context) error {
	batch := &pgx.Batch{QueuedQueries: b.carry}
	b.carry = nil
	b.versions.queue(batch)
	return b.send(ctx, batch)
}

// sendCarry sends what the deliveries so far left to send, before a
// statement of a handler's own.
func (b *txBatch) sendCarry(ctx context.Context) error {
	batch := &pgx.Batch{QueuedQueries: b.carry}
	b.carry = nil
	return b.send(ctx, batch)
}

func (b *txBatch) send(ctx context.Context, batch *pgx.Batch) error {
	if batch.Len() == 0 {
		return nil
	}
	if err := b.tx.SendBatch(ctx, batch).Close(); err != nil {
		return &carriedError{Err: err}
	}
	return nil
}

// carriedError is a delivery's closing statements failing in a later
// round trip of its batch.
type carriedError struct{ Err error }

func (e *carriedError) Error() string {
	return fmt.Sprintf("close an earlier delivery's work (deferred statements, resource version): %v", e.Err)
}

func (e *carriedError) Unwrap() error { return e.Err }
