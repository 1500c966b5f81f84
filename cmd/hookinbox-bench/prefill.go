package main

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/prefill.sql
var prefillSQL string

//go:embed sql/prefill_partition_top.sql
var prefillPartitionTopSQL string

// prefillChunk is how many deliveries one prefill statement writes.
const prefillChunk = 50_000

// prefillPartition is the width, in ids, of the partitions the prefill
// makes ahead of its rows, as wide as migration 026's first one. A running
// service makes them a day of its traffic wide (jobs.PartitionSpan).
const prefillPartition = 1_000_000

// prefill gives the database n deliveries of history before the steps, as
// a service that has run for a while has: inbox rows with their outcome,
// and the completed River jobs River keeps for a day. A fresh database
// measures a young inbox, whose indexes fit the buffer pool and whose
// insert-driven vacuums come every minute; this is the other end.
func prefill(ctx context.Context, db *pgxpool.Pool, event string, bodies []payload, n int, progress func(string, ...any)) (float64, error) {
	t0 := time.Now()
	progress("prefill: %d %s deliveries of history (1 ms apart, up to now)", n, event)
	// One connection: the bodies go to a temporary table once.
	conn, err := db.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "CREATE TEMPORARY TABLE prefill_payload (i int PRIMARY KEY, body bytea NOT NULL, resource_key text NOT NULL)"); err != nil {
		return 0, fmt.Errorf("prefill: %w", err)
	}
	rows := make([][]any, len(bodies))
	for i, p := range bodies {
		rows[i] = []any{i, p.body, issueResourceKey(i)}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"prefill_payload"}, []string{"i", "body", "resource_key"}, pgx.CopyFromRows(rows)); err != nil {
		return 0, fmt.Errorf("prefill: %w", err)
	}
	for from := 1; from <= n; from += prefillChunk {
		to := min(from+prefillChunk-1, n)
		if err := partitionAhead(ctx, conn, int64(to-from+1)); err != nil {
			return 0, fmt.Errorf("prefill rows %d–%d: %w", from, to, err)
		}
		if _, err := conn.Exec(ctx, prefillSQL, from, to, n, len(bodies), event); err != nil {
			return 0, fmt.Errorf("prefill rows %d–%d: %w", from, to, err)
		}
	}
	// As autovacuum would have, over the hours the rows stand for.
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE inbox, inbox_key, inbox_outcome, river_job"); err != nil {
		return 0, fmt.Errorf("prefill: %w", err)
	}
	secs := time.Since(t0).Seconds()
	progress("prefill: done in %.0fs", secs)
	return secs, nil
}

// partitionAhead makes inbox partitions until the next rows' ids fit one,
// as the service's inbox_partitions job keeps ahead of ingest: rows past
// the last partition would land in the overflow partition, which a
// running service never fills. The job may make one at the same moment;
// the loser's ATTACH fails on the overlap, and the bounds are read again.
func partitionAhead(ctx context.Context, conn *pgxpool.Conn, rows int64) error {
	for tries := 0; ; tries++ {
		var next int64
		var top *int64
		if err := conn.QueryRow(ctx, prefillPartitionTopSQL).Scan(&next, &top); err != nil {
			return err
		}
		if top == nil || next+rows <= *top {
			return nil
		}
		lo := max(*top, next)
		_, err := conn.Exec(ctx, "SELECT inbox_partition_create($1, $2)", lo, lo+prefillPartition)
		if err != nil && tries >= 3 {
			return fmt.Errorf("make partition [%d, %d): %w", lo, lo+prefillPartition, err)
		}
	}
}
