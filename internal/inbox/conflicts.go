package inbox

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/conflict_insert.sql
	conflictInsertSQL string
	//go:embed sql/retention_conflict.sql
	retentionConflictSQL string
	//go:embed sql/conflicts_list.sql
	conflictsListSQL string
	//go:embed sql/conflict_get.sql
	conflictGetSQL string
)

// ListConflicts reads the recorded conflicts older than cursor (all when
// nil), newest first, at most limit, each with the stored delivery it
// conflicts with (conflicts_list.sql). Columns: id, source, delivery_id,
// the stored delivery's inbox id (NULL once retention deleted it),
// received_at, payload_sha256, body_size, the stored delivery's
// payload_sha256.
func ListConflicts(ctx context.Context, q Querier, cursor *int64, limit int) (pgx.Rows, error) {
	return q.Query(ctx, conflictsListSQL, pgx.NamedArgs{"cursor": cursor, "limit": limit})
}

// GetConflict reads one recorded conflict and the stored delivery, whose
// payload is read up to bodyCap bytes (conflict_get.sql); pgx.ErrNoRows
// when there is none with id id. Columns: id, source, delivery_id,
// received_at, payload_sha256, headers, body, body_size, then the stored
// delivery's id, received_at, payload_sha256, payload (its first bodyCap
// bytes) and payload length, all NULL once retention deleted it.
func GetConflict(ctx context.Context, q Querier, id int64, bodyCap int) pgx.Row {
	return q.QueryRow(ctx, conflictGetSQL, pgx.NamedArgs{"id": id, "cap": bodyCap})
}

// Execer runs a statement whose rows nobody reads: a pool, a connection or
// a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Conflict is a delivery refused because the inbox holds its id with
// another body (409 delivery_id_conflict).
type Conflict struct {
	Source, DeliveryID string
	InboxID            *int64 // the stored delivery it conflicts with; nil: not known
	PayloadSHA256      []byte // the whole body's sha256
	Headers            http.Header
	Body               []byte // as much of the body as the caller keeps
	BodySize           int    // the whole body's length
}

// RecordConflict records c in delivery_conflict (conflict_insert.sql): a
// row of its own, in a statement of its own, never the inbox. The same
// body refused again counts a copy on its row.
func RecordConflict(ctx context.Context, e Execer, c Conflict) error {
	_, err := e.Exec(ctx, conflictInsertSQL, pgnamed.Args{
		"source": c.Source, "delivery_id": c.DeliveryID, "inbox_id": c.InboxID, "payload_sha256": c.PayloadSHA256,
		"headers": c.Headers, "body": c.Body, "body_size": c.BodySize,
	})
	return err
}

// DeleteExpiredConflicts deletes one batch of the conflict records
// received before cutoff, at most batch, oldest first
// (retention_conflict.sql), and returns how many it deleted: fewer than
// batch when none is left.
func DeleteExpiredConflicts(ctx context.Context, e Execer, cutoff time.Time, batch int) (int64, error) {
	tag, err := e.Exec(ctx, retentionConflictSQL, pgx.NamedArgs{"cutoff": cutoff, "batch": batch})
	return tag.RowsAffected(), err
}
