package handlers

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// TxBatch processes deliveries one after another in one transaction (a
// processing batch), each as ProcessNoWait does: ProcessAll takes their
// resources and versions in one round trip, and the statements that close
// a delivery's work (its savepoint, its handlers' Event.Defer writes, its
// resource's new version, the savepoint's release) travel with a later
// round trip, or with Flush. In the steady benchmark round trips were
// most of serve's CPU and of a batch's length.
//
// Call Flush before the transaction commits. When a carried statement
// fails, ProcessAll or Flush returns a *CarriedError: the earlier
// delivery's work is not recorded, so the transaction must not commit.
type TxBatch struct {
	r     *Registry
	tx    pgx.Tx
	carry []*pgx.QueuedQuery
}

// NewTxBatch starts a TxBatch on tx.
func (r *Registry) NewTxBatch(tx pgx.Tx) *TxBatch { return &TxBatch{r: r, tx: tx} }

// Flush sends what the last delivery left to send.
func (b *TxBatch) Flush(ctx context.Context) error {
	if len(b.carry) == 0 {
		return nil
	}
	batch := &pgx.Batch{QueuedQueries: b.carry}
	b.carry = nil
	if err := b.tx.SendBatch(ctx, batch).Close(); err != nil {
		return &CarriedError{Err: err}
	}
	return nil
}

// CarriedError is a delivery's closing statements failing in a later
// round trip of its TxBatch.
type CarriedError struct{ Err error }

func (e *CarriedError) Error() string {
	return fmt.Sprintf("close an earlier delivery's work (deferred statements, resource version): %v", e.Err)
}

func (e *CarriedError) Unwrap() error { return e.Err }
