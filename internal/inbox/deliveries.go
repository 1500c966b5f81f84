package inbox

import (
	"context"
	_ "embed"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/list.sql
	listSQL string
	//go:embed sql/list_until.sql
	listUntilSQL string
	//go:embed sql/list_pending.sql
	listPendingSQL string
	//go:embed sql/list_outcome.sql
	listOutcomeSQL string
	//go:embed sql/list_send_failed.sql
	listSendFailedSQL string
	//go:embed sql/get.sql
	getSQL string
	//go:embed sql/exists.sql
	existsSQL string
	//go:embed sql/status.sql
	statusSQL string
	//go:embed sql/known.sql
	knownSQL string
)

// ListFilter selects a page of deliveries, newest first. Each filter is
// off when nil.
type ListFilter struct {
	Source, Status, EventType *string
	Resource                  *string // the resource_key processing found
	Since                     *time.Time
	// Until: received before it. The page is then ordered by received_at,
	// then id, and paginated on both (Cursor and CursorAt), unless
	// FailedSends is set.
	Until *time.Time
	// FailedSends: only deliveries with a send that failed for good, to
	// Destination when it is set, to any destination otherwise.
	FailedSends bool
	Destination *string
	Cursor      *int64     // older than this id (with Until: than CursorAt and this id)
	CursorAt    *time.Time // with Until: the cursor's received_at
	After       *int64     // newer than this id (the console's poll for new deliveries)
	Limit       int        // the most rows returned
}

// List reads a page of deliveries with their state (list*.sql). Each
// filter has the statement whose index answers it, so that a page costs
// what its rows cost, not a walk down the inbox (docs/admin.md, "What the
// pages cost at 10 M rows"). Columns: id, source, delivery_id, event_type,
// status, origin, resource_key, stale, occurred_at, received_at,
// processed_at, last_error, size (the payload's length in bytes).
func List(ctx context.Context, q Querier, f ListFilter) (pgx.Rows, error) {
	args := pgx.NamedArgs{"source": f.Source, "status": f.Status, "event_type": f.EventType,
		"resource": f.Resource, "since": f.Since, "until": f.Until, "cursor": f.Cursor, "after": f.After,
		"destination": f.Destination, "limit": f.Limit}
	sql := listSQL
	switch {
	case f.FailedSends:
		sql = listSendFailedSQL
	case f.Until != nil:
		sql, args["cursor_at"] = listUntilSQL, f.CursorAt
	// Filters the state tables answer through an index: their rows lead.
	case is(f.Status, "received"):
		sql = listPendingSQL
	case is(f.Status, "skipped") || is(f.Status, "failed") || f.Resource != nil:
		sql = listOutcomeSQL
	}
	return q.Query(ctx, sql, args)
}

func is(p *string, s string) bool { return p != nil && *p == s }

// Get reads one delivery with its state (get.sql); pgx.ErrNoRows when the
// inbox holds none with id id. Columns: List's, then headers, payload,
// payload_sha256.
func Get(ctx context.Context, q Querier, id int64) pgx.Row {
	return q.QueryRow(ctx, getSQL, pgx.NamedArgs{"id": id})
}

// Exists reports whether the inbox holds a delivery with id id
// (exists.sql).
func Exists(ctx context.Context, q Querier, id int64) (bool, error) {
	var exists bool
	err := q.QueryRow(ctx, existsSQL, pgx.NamedArgs{"id": id}).Scan(&exists)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return exists, err
}

// Status reads a delivery's status as the view delivery shows it
// (received while pending, then what processing decided) and its last
// error, if any (status.sql); pgx.ErrNoRows when there is no such
// delivery.
func Status(ctx context.Context, q Querier, id int64) (status string, lastError *string, err error) {
	err = q.QueryRow(ctx, statusSQL, id).Scan(&status, &lastError)
	return status, lastError, err
}

// KnownDeliveryIDs returns which of deliveryIDs the inbox holds for
// source, in one statement however many are asked (known.sql).
func KnownDeliveryIDs(ctx context.Context, q Querier, source string, deliveryIDs []string) ([]string, error) {
	rows, err := q.Query(ctx, knownSQL, source, deliveryIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
