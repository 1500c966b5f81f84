package inbox

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"
)

var (
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
