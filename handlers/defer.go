package handlers

import "github.com/jackc/pgx/v5"

// Defer queues a write of this delivery's work whose result the handler does
// not need (an upsert, an insert, a ledger line). It is sent with the
// statements that close the delivery (its resource's new version), after
// every statement the handler ran on Tx itself, in the order queued. In a
// processing batch those travel with the next delivery's first round trip, so
// the write costs no round trip of its own; in the steady benchmark a round
// trip was the largest cost of a processed delivery (bench/README.md, Design
// decisions, "Processing batches").
//
// The delivery fails if a deferred statement fails, as when Handle returns
// an error, and River retries it: in a batch, the batch rolls back and
// each of its deliveries is processed alone. A handler that needs the
// result, or must act on the error, runs the statement on Tx instead.
// args are those of pgx (pgx.NamedArgs included).
func (e *Event) Defer(sql string, args ...any) {
	e.deferred = append(e.deferred, &pgx.QueuedQuery{SQL: sql, Arguments: args})
}
