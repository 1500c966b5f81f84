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
func queueLineUp(b *pgx.Batch, d *dest, more *bool) {
	b.Queue(chainLineUpSQL, pgnamed.Args{"destination": d.Name, "limit": lineUpLimit}).Exec(func(tag pgconn.CommandTag) error {
		*more = tag.RowsAffected() >= lineUpLimit
		return nil
	})
}
