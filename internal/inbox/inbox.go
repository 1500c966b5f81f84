package inbox

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Querier is a pool, a connection or a transaction: a function that takes
// one runs its statement there, so a caller that wants the statement in
// its own transaction (one snapshot, or beside its own writes) passes the
// transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
