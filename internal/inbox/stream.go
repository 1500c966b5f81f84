package inbox

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/stream_high_water.sql
	streamHighWaterSQL string
	//go:embed sql/stream_inserting.sql
	streamInsertingSQL string
	//go:embed sql/stream_scan.sql
	streamScanSQL string
	//go:embed sql/stream_load.sql
	streamLoadSQL string
	//go:embed sql/stream_since.sql
	streamSinceSQL string
)

// A follower (`hookinbox listen`, through GET /admin/deliveries/stream)
// reads the inbox in id order and keeps a cursor: the id it has read up
// to. Ids are taken when a delivery is inserted, but transactions commit
// in their own order: one that took id 7 may commit after one that took
// id 8, and a follower that read 8 and moved its cursor there would never
// see 7. So a follower reads only up to a settled horizon (Settle): an id
// at or below which every delivery that will ever be stored is stored
// already.
//
// Settle finds one without a column of its own or a wait on unrelated
// work. Every transaction that inserts into the inbox takes the key
// generations' fence before it takes an id and holds it until it ends
// (sql/key_fence.sql). Settle reads the sequence's high water M,
// then the fence's holders H, then waits until none of H holds it. An id
// j ≤ M was taken before M was read, by a transaction that held the fence
// from before it took j: when H is read, that transaction has ended
// (its row is committed or never will be) or is in H, and Settle waits for
// it. A transaction that takes the fence after H is read takes an id
// after M was read, so greater than M. Reading M first matters: read
// after H, it could cover an id taken by a transaction that took the
// fence in between. Only inserting transactions are waited for, each a
// few milliseconds long; a snapshot's xmin would also wait for every
// long report or idle transaction, and a row's xmin would miss a
// transaction that has taken its id but not yet written (it has no xid).

// HighWater is the greatest id the inbox's sequence has handed out, 0
// before the first (stream_high_water.sql). It only grows: a follower's
// cursor above it comes from another database.
func HighWater(ctx context.Context, q Querier) (int64, error) {
	var hw int64
	err := q.QueryRow(ctx, streamHighWaterSQL).Scan(&hw)
	return hw, err
}

// Settle returns a horizon: an id at or below which every delivery that
// will ever be stored is committed now, so a follower may move its cursor
// up to it (see above). It waits for the inserts in flight, a few
// milliseconds each; ctx bounds the wait.
func Settle(ctx context.Context, q Querier) (int64, error) {
	hw, err := HighWater(ctx, q)
	if err != nil {
		return 0, err
	}
	holders, err := inserting(ctx, q, nil)
	for pause := time.Millisecond; err == nil && len(holders) > 0; pause = min(2*pause, 20*time.Millisecond) {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(pause):
		}
		holders, err = inserting(ctx, q, holders)
	}
	return hw, err
}

// inserting lists the transactions inserting into the inbox now, or,
// given among, those of among still inserting (stream_inserting.sql).
func inserting(ctx context.Context, q Querier, among []string) ([]string, error) {
	var holders []string
	err := q.QueryRow(ctx, streamInsertingSQL, pgx.NamedArgs{"among": among}).Scan(&holders)
	return holders, err
}

// StreamFilter selects a follower's next rows.
type StreamFilter struct {
	After   int64    // the follower's cursor: rows with a greater id
	Through int64    // a horizon Settle returned: rows up to this id
	Sources []string // only these sources; all when empty
	Limit   int      // the most rows returned
}

// StreamScan reads the rows after a follower's cursor up to a settled
// horizon, in id order, without their payloads (stream_scan.sql).
// Columns: id, source, event_type, size (the payload's length in bytes).
func StreamScan(ctx context.Context, q Querier, f StreamFilter) (pgx.Rows, error) {
	sources := f.Sources
	if sources == nil {
		sources = []string{}
	}
	return q.Query(ctx, streamScanSQL, pgx.NamedArgs{"after": f.After, "through": f.Through,
		"sources": sources, "limit": f.Limit})
}

// StreamLoad reads the deliveries with the ids given, which ascend, in id
// order, with their headers and payloads (stream_load.sql); a delivery
// deleted since is left out. Columns: id, source, delivery_id,
// event_type, received_at, headers, payload.
func StreamLoad(ctx context.Context, q Querier, ids []int64) (pgx.Rows, error) {
	var first, last int64
	if len(ids) > 0 {
		first, last = ids[0], ids[len(ids)-1]
	}
	return q.Query(ctx, streamLoadSQL, pgx.NamedArgs{"ids": ids, "first": first, "last": last})
}

// FirstSince returns the cursor of a follower that starts at a time: just
// below the first delivery received at or after since; ok is false when
// none was (stream_since.sql).
func FirstSince(ctx context.Context, q Querier, since time.Time) (cursor int64, ok bool, err error) {
	var first *int64
	if err := q.QueryRow(ctx, streamSinceSQL, pgx.NamedArgs{"since": since}).Scan(&first); err != nil || first == nil {
		return 0, false, err
	}
	return *first - 1, true, nil
}
