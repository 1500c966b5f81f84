package destination

import (
	_ "embed"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/chain_line_up.sql
var chainLineUpSQL string

// lineUpLimit bounds the new ordered sends one claim puts in line. Under
// a steady stream of them a claim comes every few milliseconds, so the
// bound is met only by a backlog, and the next claim follows at once.
const lineUpLimit = 1000

// queueLineUp queues, for a claim holding the destination's state row, the
// statement that puts the ordered sends processing enqueued in their
// resources' lines: due at once where the turn is free, behind the send
// in progress otherwise. Processing takes no turn itself: it would hold
// the turn's row until its batch commits, and the sender handing turns on
// would wait for it. *more is set when the bound left some for the next
// claim.
//
// The statement joins its own results (the sends read, each resource's first,
// the turns taken) and the sends by id, and is planned without nested loops.
// Planned from statistics taken while the destination had few waiting sends
// (its first minute, or before a pause or an outage built a backlog), it
// expects one row of each and compares every send with every other, and a
// drain under traffic stalled (bench/README.md, Design decisions, "Turn
// statements' plans"). Hashed, it reads only the sends it lines up
// (TestLineUpPlansNoNestedLoop).
func queueLineUp(b *pgx.Batch, d *dest, more *bool) {
	b.Queue(lineUpPlansSQL)
	b.Queue(chainLineUpSQL, pgnamed.Args{"destination": d.Name, "limit": lineUpLimit}).Exec(func(tag pgconn.CommandTag) error {
		*more = tag.RowsAffected() >= lineUpLimit
		return nil
	})
	b.Queue(lineUpPlansDoneSQL)
}

// lineUpPlansSQL and lineUpPlansDoneSQL bracket the line-up in the
// claim's transaction (queueLineUp).
const (
	lineUpPlansSQL     = "SET LOCAL enable_nestloop = off"
	lineUpPlansDoneSQL = "SET LOCAL enable_nestloop TO DEFAULT"
)
