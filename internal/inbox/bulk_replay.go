package inbox

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"
)

// A bulk replay's row (table bulk_replay) is jobs', which advances it and
// reports it; the two statements here read the inbox's tables in the
// statement that writes or locks that row. A selection taken in one
// statement and stored in another would be two snapshots and two round
// trips, with up to jobs.MaxBulkReplay ids sent back and forth between them.
var (
	//go:embed sql/bulk_replay_insert.sql
	bulkReplayInsertSQL string
	//go:embed sql/bulk_replay_lock.sql
	bulkReplayLockSQL string
)

// RecordBulkReplay records a bulk replay of the deliveries s selects now,
// oldest first, at most limit (bulk_replay_insert.sql: CountSelected's
// filters), with filter, the request as the caller reports it (stored as
// JSON), and returns the bulk replay's id. Later arrivals are not
// selected.
func RecordBulkReplay(ctx context.Context, q Querier, filter any, s Selection, limit int) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, bulkReplayInsertSQL, pgx.NamedArgs{"source": s.Source, "status": s.Status,
		"event_type": s.EventType, "since": s.Since, "until": s.Until, "filter": filter, "limit": limit}).Scan(&id)
	return id, err
}

// BulkReplayBatch is a bulk replay's next batch.
type BulkReplayBatch struct {
	State    string  // running or finished
	Position int     // how many of the selection are behind
	Total    int     // the selection's size
	IDs      []int64 // the batch's deliveries the inbox still holds, ascending
	Consumed int     // how many of the selection the batch covers, deleted ones included
}

// LockBulkReplayBatch locks bulk replay id's row in the caller's
// transaction and reads its next batch, of at most size deliveries, minus
// those retention deleted since the selection (bulk_replay_lock.sql);
// pgx.ErrNoRows when there is no such bulk replay.
func LockBulkReplayBatch(ctx context.Context, tx pgx.Tx, id int64, size int) (BulkReplayBatch, error) {
	var b BulkReplayBatch
	err := tx.QueryRow(ctx, bulkReplayLockSQL, pgx.NamedArgs{"id": id, "batch": size}).
		Scan(&b.State, &b.Position, &b.Total, &b.IDs, &b.Consumed)
	return b, err
}
