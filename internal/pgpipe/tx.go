package pgpipe

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Tx is a pgx.Tx handed to code that runs statements of its own (a
// handler, River) on a transaction that has statements in flight: Before
// is called ahead of each of them, with its text (each of a batch's in
// turn, "COPY table" for CopyFrom, "SAVEPOINT" for Begin), and an error
// from it is the statement's, which is then not sent. A caller whose Pipe
// must go first flushes it there; one whose COMMIT already went refuses
// what must not follow it.
type Tx struct {
	pgx.Tx
	Before func(ctx context.Context, sql string) error
}

func (t *Tx) before(ctx context.Context, sql string) error {
	if t.Before == nil {
		return nil
	}
	return t.Before(ctx, sql)
}

func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.before(ctx, sql); err != nil {
		return pgconn.CommandTag{}, err
	}
	return t.Tx.Exec(ctx, sql, args...)
}

func (t *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := t.before(ctx, sql); err != nil {
		return nil, err
	}
	return t.Tx.Query(ctx, sql, args...)
}

func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := t.before(ctx, sql); err != nil {
		return errRow{err}
	}
	return t.Tx.QueryRow(ctx, sql, args...)
}

func (t *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	for _, q := range b.QueuedQueries {
		if err := t.before(ctx, q.SQL); err != nil {
			return pgx.FailedBatchResults(b, err)
		}
	}
	return t.Tx.SendBatch(ctx, b)
}

func (t *Tx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.before(ctx, "COPY "+table.Sanitize()); err != nil {
		return 0, err
	}
	return t.Tx.CopyFrom(ctx, table, columns, src)
}

func (t *Tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := t.before(ctx, sql); err != nil {
		return nil, err
	}
	return t.Tx.Prepare(ctx, name, sql)
}

func (t *Tx) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := t.before(ctx, "SAVEPOINT"); err != nil {
		return nil, err
	}
	return t.Tx.Begin(ctx)
}

// errRow answers Scan with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// rollbackWithin bounds Release's rollback.
const rollbackWithin = 5 * time.Second

// Release returns conn to its pool, first rolling back a transaction a
// pipelined one left open (an error before its COMMIT went out, or a
// statement that failed ahead of it and skipped it). A transaction whose
// COMMIT travelled and was answered needs no round trip here, whatever its
// pgx.Tx believes. The rollback is bounded and runs even when ctx has
// ended; a connection it could not end is closed, not pooled (pgxpool
// closes one returned inside a transaction).
func Release(ctx context.Context, conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackWithin)
		_, _ = conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
	conn.Release()
}
