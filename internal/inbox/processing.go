package inbox

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/inbox_load.sql
	loadSQL string
	//go:embed sql/inbox_load_many.sql
	loadManySQL string
	//go:embed sql/inbox_payloads.sql
	payloadsSQL string
	//go:embed sql/inbox_mark_error.sql
	markErrorSQL string
)

// Load reads a delivery for processing (inbox_load.sql); pgx.ErrNoRows
// when the inbox holds none with id id (retention deleted it). Columns:
// id, source, delivery_id, event_type, occurred_at, received_at, headers,
// payload.
func Load(ctx context.Context, q Querier, id int64) pgx.Row {
	return q.QueryRow(ctx, loadSQL, pgnamed.Args{"id": id})
}

// LoadMany reads a processing batch's deliveries (inbox_load_many.sql):
// Load's columns, with headers and payload NULL, as many events match no
// handler and need neither; LoadPayloads reads them for those that do.
// A delivery retention deleted is not among the rows.
//
// Both are planned for their arguments on every call (pgx's
// QueryExecModeCacheDescribe: still one round trip), never from a cached
// generic plan: one made while the inbox was small scans it whole once it
// grew (bench/README.md, Design decisions, "Completing a processing
// batch").
func LoadMany(ctx context.Context, q Querier, ids []int64) (pgx.Rows, error) {
	return q.Query(ctx, loadManySQL, pgx.QueryExecModeCacheDescribe, pgnamed.Args{"ids": ids})
}

// LoadPayloads reads the headers and payloads of a processing batch's
// deliveries (inbox_payloads.sql). Columns: id, headers, payload.
func LoadPayloads(ctx context.Context, q Querier, ids []int64) (pgx.Rows, error) {
	return q.Query(ctx, payloadsSQL, pgx.QueryExecModeCacheDescribe, pgnamed.Args{"ids": ids})
}

// FailedAttempt is a processing attempt that failed.
type FailedAttempt struct {
	InboxID int64
	Error   string
	// Final: the delivery is failed (its last attempt, or a permanent
	// error); otherwise it keeps its status and shows Error while retries
	// remain.
	Final bool
	// StartedAt is when the attempt began: an outcome another run recorded
	// after it (a concurrent replay) stands.
	StartedAt time.Time
}

// MarkError records a failed attempt (inbox_mark_error.sql). A caller
// whose transaction failed runs it on the pool, so that the reason
// survives the rollback; a batch runs it in its transaction, beside the
// retry's job.
func MarkError(ctx context.Context, e Execer, a FailedAttempt) error {
	_, err := e.Exec(ctx, markErrorSQL, pgnamed.Args{
		"id": a.InboxID, "last_error": a.Error, "final": a.Final, "attempt_started_at": a.StartedAt,
	})
	return err
}
