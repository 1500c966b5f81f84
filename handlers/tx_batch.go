package handlers

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// TxBatch processes deliveries one after another in one transaction (a
// processing batch), each as Process does but under a savepoint of its
// own, so that an error rolls back that delivery's work alone, and
// without waiting for a resource another transaction holds, which could
// deadlock two batches (ErrResourceBusy: the delivery is processed alone
// instead). ProcessAll takes their resources and versions in one round
// trip, the statements that close a delivery's work (its handlers'
// Event.Defer writes, the release of its savepoint if it has one) travel
// with a later round trip, or with Flush, and Flush records every
// delivery's new resource version at once. In the steady benchmark round
// trips were most of serve's CPU and of a batch's length.
//
// TxBatch is how jobs processes a batch; a program built on hookinbox has
// no need of it.
//
// Call Flush before the transaction commits. When a carried statement
// fails, ProcessAll or Flush returns the batch's error: the earlier
// delivery's work is not recorded, so the transaction must not commit.
type TxBatch struct {
	r        *Registry
	tx       pgx.Tx
	carry    []*pgx.QueuedQuery
	versions batchVersions // sent by Flush only
}

// NewTxBatch starts a TxBatch on tx.
func (r *Registry) NewTxBatch(tx pgx.Tx) *TxBatch { return &TxBatch{r: r, tx: tx} }

// Flush sends what the last delivery left to send, and the new versions
// of every processed delivery's resource.
func (b *TxBatch) Flush(ctx context.Context) error {
	batch := &pgx.Batch{QueuedQueries: b.carry}
	b.carry = nil
	b.versions.queue(batch)
	return b.send(ctx, batch)
}

// sendCarry sends what the deliveries so far left to send, before a
// statement of a handler's own.
func (b *TxBatch) sendCarry(ctx context.Context) error {
	batch := &pgx.Batch{QueuedQueries: b.carry}
	b.carry = nil
	return b.send(ctx, batch)
}

func (b *TxBatch) send(ctx context.Context, batch *pgx.Batch) error {
	if batch.Len() == 0 {
		return nil
	}
	if err := b.tx.SendBatch(ctx, batch).Close(); err != nil {
		return &carriedError{Err: err}
	}
	return nil
}

// carriedError is a delivery's closing statements failing in a later
// round trip of its TxBatch.
type carriedError struct{ Err error }

func (e *carriedError) Error() string {
	return fmt.Sprintf("close an earlier delivery's work (deferred statements, resource version): %v", e.Err)
}

func (e *carriedError) Unwrap() error { return e.Err }
