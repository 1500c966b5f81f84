package inbox

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/status_counts.sql
	statusCountsSQL string
	//go:embed sql/oldest_pending.sql
	oldestPendingSQL string
	//go:embed sql/backlog.sql
	backlogSQL string
	//go:embed sql/count_selected.sql
	countSelectedSQL string
)

// CountByStatus counts the deliveries of every status, 0 included
// (status_counts.sql): received, skipped and failed exactly; processed
// exactly up to exactLimit, past it the planner's estimate, since a count
// on every call would read the whole outcome table. Columns: status,
// count float8, estimated float8 (1 when the count is the estimate).
func CountByStatus(ctx context.Context, q Querier, exactLimit int64) (pgx.Rows, error) {
	return q.Query(ctx, statusCountsSQL, pgx.NamedArgs{"exact_limit": exactLimit})
}

// OldestPendingSeconds is the age in seconds of the oldest delivery not
// yet decided, 0 when none waits (oldest_pending.sql).
func OldestPendingSeconds(ctx context.Context, q Querier) (float64, error) {
	var age float64
	err := q.QueryRow(ctx, oldestPendingSQL).Scan(&age)
	return age, err
}

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
