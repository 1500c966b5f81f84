package handlers

import (
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"
)

// RowWriter writes, in one statement, rows that handlers defer with
// Event.DeferRow: a processing batch's rows for one writer all at once,
// where Event.Defer would send a statement a row. It suits an outbox or a
// ledger that gets a row per delivery: the destinations' outbox is one
// (bench/README.md, Design decisions, "Send rows per batch").
type RowWriter interface {
	// QueueRows adds to batch the statement that writes rows, each a
	// value given to Event.DeferRow with this writer, in the order the
	// deliveries deferred them. It must not keep rows.
	QueueRows(batch *pgx.Batch, rows []any)
}

// DeferRow queues row for w to write with the statements that close the
// processing: in a processing batch, at its end, with every other
// delivery's rows for w; alone, with this delivery's Defer statements. No
// delivery of the batch sees the row before it commits, so it suits only
// rows processing does not read back. A failure is as with Defer: the
// delivery fails, a batch's deliveries are processed one by one, and each
// one's rows are written alone. w must be comparable (a pointer, say): the
// rows of one writer are those given with an equal w; DeferRow panics
// otherwise, which fails the delivery.
func (e *Event) DeferRow(w RowWriter, row any) {
	if w == nil || !reflect.TypeOf(w).Comparable() {
		// Caught where the handler runs: the delivery fails with this,
		// not the batch's grouping later with a runtime error.
		panic(fmt.Sprintf("handlers: DeferRow needs a comparable RowWriter (a pointer, say), not %T", w))
	}
	e.deferredRows = append(e.deferredRows, deferredRow{w, row})
}

type deferredRow struct {
	w   RowWriter
	row any
}

// deferredWork is what a delivery's handlers left to send: statements
// (Defer), then rows (DeferRow).
type deferredWork struct {
	stmts []*pgx.QueuedQuery
	rows  []deferredRow
}

// rowGroups are the rows of a batch's processed deliveries, by writer in
// the order each was first used.
type rowGroups struct {
	writers []RowWriter
	rows    [][]any
}

func (g *rowGroups) add(rows []deferredRow) {
	for _, r := range rows {
		i := 0
		for i < len(g.writers) && g.writers[i] != r.w {
			i++
		}
		if i == len(g.writers) {
			g.writers, g.rows = append(g.writers, r.w), append(g.rows, nil)
		}
		g.rows[i] = append(g.rows[i], r.row)
	}
}

// queue adds each writer's statement to batch, and forgets the rows.
func (g *rowGroups) queue(batch *pgx.Batch) {
	for i, w := range g.writers {
		w.QueueRows(batch, g.rows[i])
	}
	g.writers, g.rows = nil, nil
}
