// Package pgpipe runs a transaction in fewer round trips to PostgreSQL:
// statements whose results the caller does not read are queued and travel
// with the transaction's next round trip, ahead of that round trip's own
// statements, and a COMMIT can travel behind the last one. Under load a
// round trip costs a scheduler turn on both sides, about what a small
// statement does (bench/README.md, "Ingest round trips" and "Processing
// batches"): ingest's batches, processing batches and destination cycles
// all send their transactions this way.
//
// What a Pipe guarantees:
//
//   - Order. Statements run in the order they were queued, every queued
//     one before the statements of the round trip that carries it, in one
//     pipeline: PostgreSQL runs them in that order, and after one fails it
//     skips the rest of the round trip (a COMMIT among them included), so
//     the transaction is left to roll back.
//   - Errors. A queued statement's error surfaces from the round trip that
//     carries it (Send, SendCommit, Flush) as a *CarriedError, and that
//     round trip's own statements did not run. Nothing is reported at
//     Queue.
//   - What must be flushed. A queued statement has not run until a round
//     trip carries it: a caller that reads what it writes, or runs a
//     statement on the transaction other than through the Pipe, flushes
//     first (Flush, or a Tx whose Before does). Rolling back to a
//     savepoint with statements still queued would leave them to run
//     after it.
//
// A Pipe is one transaction's, used by one goroutine, like the pgx.Tx or
// connection it sends on.
package pgpipe

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Sender sends one round trip: a pgx.Tx, a *pgx.Conn or a *pgxpool.Conn.
type Sender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Pipe is the statements a transaction carries into its next round trip.
type Pipe struct {
	s      Sender
	queued []*pgx.QueuedQuery
}

// New is an empty Pipe sending on s.
func New(s Sender) *Pipe { return &Pipe{s: s} }

// Queue carries a statement into the next round trip. args are pgx's
// (pgx.NamedArgs included).
func (p *Pipe) Queue(sql string, args ...any) {
	p.queued = append(p.queued, &pgx.QueuedQuery{SQL: sql, Arguments: args})
}

// Carry queues qs, in order. A statement's Fn, if set, reads its result
// when a round trip carries it; its error fails that round trip as any
// carried statement's does.
func (p *Pipe) Carry(qs ...*pgx.QueuedQuery) { p.queued = append(p.queued, qs...) }

// Len is how many statements are queued.
func (p *Pipe) Len() int { return len(p.queued) }

// Drop forgets the statements queued after the first n: they will not be
// sent.
func (p *Pipe) Drop(n int) { p.queued = p.queued[:n] }

// Send sends the queued statements, then b's, in one round trip, and
// reads the queued ones' results. It returns b's results for the caller
// to read and close (Close runs the Fn of those left unread). With
// nothing queued and b empty, nothing is sent.
func (p *Pipe) Send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	carried := len(p.queued)
	all := &pgx.Batch{QueuedQueries: append(p.queued, b.QueuedQueries...)}
	p.queued = nil
	res := p.s.SendBatch(ctx, all)
	for _, q := range all.QueuedQueries[:carried] {
		var err error
		if q.Fn != nil {
			err = q.Fn(res)
		} else {
			_, err = res.Exec()
		}
		if err != nil {
			res.Close() //nolint:errcheck // err is the answer
			return nil, &CarriedError{Err: err}
		}
	}
	return res, nil
}

// SendCommit is Send with a COMMIT behind b's statements: the round trip
// ends the transaction. Closing the results reports whether it committed:
// a failing statement skips the COMMIT (its error is Close's), and a
// COMMIT PostgreSQL answers with a rollback, as in a transaction an
// earlier round trip aborted, is pgx.ErrTxCommitRollback.
func (p *Pipe) SendCommit(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	return p.Send(ctx, b)
}

// Flush sends what is queued, alone: one round trip, none when nothing
// is queued.
func (p *Pipe) Flush(ctx context.Context) error {
	if len(p.queued) == 0 {
		return nil
	}
	res, err := p.Send(ctx, &pgx.Batch{})
	if err != nil {
		return err
	}
	return res.Close()
}

// CarriedError is a queued statement failing in the round trip that
// carried it. The transaction is aborted.
type CarriedError struct{ Err error }

func (e *CarriedError) Error() string {
	return fmt.Sprintf("carried statement: %v", e.Err)
}

func (e *CarriedError) Unwrap() error { return e.Err }
