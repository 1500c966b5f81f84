package destination

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

// sendRow is one send to record (send_insert.sql).
type sendRow struct {
	destination, source, deliveryID, eventType, key, state string
	inboxID                                                int64
	ordered, skipStale, atIsReceipt                        bool
	resourceKey, lastError, traceParent                    *string
	eventAt, eventReceivedAt                               time.Time
}

// sendRows writes the sends a processing batch's deliveries defer
// (handlers.Event.DeferRow) in one statement: one insert a send was
// processing's most frequent statement (bench/README.md, Design
// decisions, "Send rows per batch").
type sendRows struct{}

func (sendRows) QueueRows(batch *pgx.Batch, rows []any) {
	batch.Queue(sendInsertSQL, sendInsertArgs(rows...))
}

// sendInsertArgs are send_insert.sql's arguments for rows, each a
// sendRow.
func sendInsertArgs(rows ...any) pgnamed.Args {
	n := len(rows)
	var (
		dests, sources, deliveryIDs, types, keys, states = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		inboxIDs                                         = make([]int64, n)
		ordered, skipStale, atIsReceipt                  = make([]bool, n), make([]bool, n), make([]bool, n)
		resourceKeys, lastErrors, traceParents           = make([]*string, n), make([]*string, n), make([]*string, n)
		eventAts, receivedAts                            = make([]time.Time, n), make([]time.Time, n)
	)
	for i, row := range rows {
		r := row.(sendRow)
		dests[i], sources[i], deliveryIDs[i], types[i], keys[i], states[i] = r.destination, r.source, r.deliveryID, r.eventType, r.key, r.state
		inboxIDs[i], ordered[i], skipStale[i], atIsReceipt[i] = r.inboxID, r.ordered, r.skipStale, r.atIsReceipt
		resourceKeys[i], lastErrors[i], traceParents[i] = r.resourceKey, r.lastError, r.traceParent
		eventAts[i], receivedAts[i] = r.eventAt, r.eventReceivedAt
	}
	// pgnamed: the statement is rewritten once, not lexed per batch.
	return pgnamed.Args{
		"destinations": dests, "sources": sources, "delivery_ids": deliveryIDs, "inbox_ids": inboxIDs,
		"event_types": types, "keys": keys, "ordered": ordered, "skip_stale": skipStale,
		"resource_keys": resourceKeys, "event_ats": eventAts, "event_received_ats": receivedAts,
		"at_is_receipts": atIsReceipt, "states": states, "last_errors": lastErrors, "trace_parents": traceParents,
	}
}
