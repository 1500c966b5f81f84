package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgpipe"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// commitCarryingTx is an ingest batch's transaction as River's job insert
// sees it: River's insert statement goes out with the batch's COMMIT
// queued behind it (pgpipe's SendCommit), one round trip instead of two.
// Every round trip on a busy 2-core machine waits a scheduler turn on both
// sides, and the ack waits for all of them: in the steady benchmark it
// shortened the ack's p99 and held rates the three round trips did not
// (bench/README.md, Design decisions, "Ingest round trips").
//
// PostgreSQL runs a pipeline's statements in order and, after an error,
// skips the rest up to its sync: the COMMIT runs only if the insert
// succeeded, and a failed insert leaves the transaction to roll back.
//
// River reads the server's version before its insert (once per client),
// inside the transaction. What it sends within InsertManyTx after its
// insert is no longer in the transaction: in River 0.51 that is only its
// insert notification (pg_notify), as well sent outside. Anything else is
// refused with errAfterCarriedCommit, so a River upgrade that writes there
// fails the ingest tests. Only an insert of every job the batch enqueues
// carries the COMMIT (River splitting them into two statements would
// otherwise commit the rows with half their jobs): a statement that is not
// that carries nothing, and the batch commits on its own. Should River
// fail after the COMMIT went through (its notification), the batch is
// stored: recordMany answers it 503 as a storedThenFailedError, which is
// not recorded again delivery by delivery.
type commitCarryingTx struct {
	pgpipe.Tx                  // Before refuses what must not follow the carried COMMIT
	jobs      int              // how many jobs the batch enqueues
	handedOn  []int64          // the inbox ids handed on before the COMMIT (Inbox.handOn)
	results   pgx.BatchResults // the insert's and the COMMIT's; nil until sent
	read      bool             // the COMMIT's outcome is in err
	err       error
}

func newCommitCarryingTx(tx pgx.Tx) *commitCarryingTx {
	t := &commitCarryingTx{}
	t.Tx = pgpipe.Tx{Tx: tx, Before: t.afterCommit}
	return t
}

// errAfterCarriedCommit: River sent a statement the carried COMMIT left
// outside the transaction, and it is not one known to be harmless there.
var errAfterCarriedCommit = errors.New("statement after the batch's COMMIT, which travelled with River's job insert")

// carried reports whether the COMMIT went out with River's insert.
func (t *commitCarryingTx) carried() bool { return t.results != nil }

func (t *commitCarryingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.carried() || !t.insertsEveryJob(sql, args) {
		return t.Tx.Query(ctx, sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	results, err := pgpipe.New(t.Tx.Tx).SendCommit(ctx, b)
	if err != nil { // nothing was queued ahead of the insert: not reached
		return nil, err
	}
	t.results = results
	rows, err := t.results.Query()
	if err != nil {
		t.finish()
		return nil, err
	}
	return &carriedRows{Rows: rows, t: t}, nil
}

// insertsEveryJob reports whether a statement is River's insert of all
// the batch's jobs. Which statement that is, and where its job kinds are,
// is River's private affair: riverdb knows it.
func (t *commitCarryingTx) insertsEveryJob(sql string, args []any) bool {
	kinds, ok := riverdb.JobInsertKinds(sql, args)
	return ok && t.jobs > 0 && len(kinds) == t.jobs
}

// afterCommit is every statement's check once the COMMIT went out: it
// finishes the carried batch, so the connection is free, and lets through
// only the statements that are harmless outside the transaction.
func (t *commitCarryingTx) afterCommit(_ context.Context, sql string) error {
	if !t.carried() {
		return nil
	}
	t.finish()
	if riverdb.IsInsertNotify(sql) {
		return nil
	}
	return fmt.Errorf("%w: %.60q", errAfterCarriedCommit, sql)
}

// finish reads the COMMIT's outcome into t.err and closes the batch.
func (t *commitCarryingTx) finish() {
	if t.read || t.results == nil {
		return
	}
	t.read = true
	t.err = t.results.Close()
}

// commit ends the transaction: it reads the carried COMMIT's outcome, or
// commits now if nothing carried it. After an error the transaction may
// be left open, for pgpipe.Release to roll back.
func (t *commitCarryingTx) commit(ctx context.Context) error {
	if !t.carried() {
		return t.Tx.Commit(ctx)
	}
	t.finish()
	if t.err != nil {
		return fmt.Errorf("commit: %w", t.err)
	}
	return nil
}

// committed reports whether the carried COMMIT went through: the batch's
// rows and jobs are stored, whatever River then returns.
func (t *commitCarryingTx) committed() bool {
	t.finish()
	return t.carried() && t.err == nil
}

// storedThenFailedError is a batch that committed, after which River
// failed (its insert notification, sent outside the transaction). The
// deliveries are stored with their jobs: they must not be recorded again
// one by one, which would answer them "duplicate"; the provider's retry of
// the 503 is.
type storedThenFailedError struct{ err error }

func (e *storedThenFailedError) Error() string {
	return fmt.Sprintf("batch committed, then River failed: %v", e.err)
}

func (e *storedThenFailedError) Unwrap() error { return e.err }

// carriedRows are River's insert's rows; closing them reads the COMMIT's
// outcome, so the connection is free for what River sends next.
type carriedRows struct {
	pgx.Rows
	t *commitCarryingTx
}

func (r *carriedRows) Close() {
	r.Rows.Close()
	r.t.finish()
}
