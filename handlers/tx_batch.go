package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgpipe"
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
	b := &txBatch{r: r, tx: tx, carry: pgpipe.New(tx)}
	results, errs, err = b.processAll(ctx, jobs, ds)
	if err == nil {
		err = b.flush(ctx)
	}
	if err != nil {
		var carried *pgpipe.CarriedError
		if errors.As(err, &carried) {
			err = fmt.Errorf("close an earlier delivery's work (deferred statements, resource version): %w", err)
		}
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
	carry    *pgpipe.Pipe
	rows     rowGroups     // sent by flush only
	versions batchVersions // sent by flush only
}

// flush sends what the last delivery left to send, the rows every
// processed delivery deferred, and the new versions of their resources.
// They all close earlier deliveries' work: their failure is the batch's
// (a *pgpipe.CarriedError).
func (b *txBatch) flush(ctx context.Context) error {
	batch := &pgx.Batch{}
	b.rows.queue(batch)
	b.versions.queue(batch)
	b.carry.Carry(batch.QueuedQueries...)
	return b.carry.Flush(ctx)
}
