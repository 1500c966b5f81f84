package inbox

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/backlog.sql
	backlogSQL string
	//go:embed sql/count_selected.sql
	countSelectedSQL string
)

// Backlog reads, per source, the deliveries not yet decided and the
// failed ones, each with its oldest (backlog.sql): from the pending table
// and the outcome table's partial status index, so its cost follows the
// backlog and the failures, not the inbox. Columns: source, status
// (received or failed), count, oldest received_at.
func Backlog(ctx context.Context, q Querier) (pgx.Rows, error) {
	return q.Query(ctx, backlogSQL)
}

// Selection is the deliveries a bulk replay's filter selects. Each filter
// is off when nil.
type Selection struct {
	Source, Status, EventType *string
	Since                     *time.Time // received at or after
	Until                     *time.Time // received before
}

// CountSelected counts the deliveries s selects now, up to limit: the
// count stops there (count_selected.sql).
func CountSelected(ctx context.Context, q Querier, s Selection, limit int64) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, countSelectedSQL, pgx.NamedArgs{"source": s.Source, "status": s.Status,
		"event_type": s.EventType, "since": s.Since, "until": s.Until, "cap": limit}).Scan(&n)
	return n, err
}
