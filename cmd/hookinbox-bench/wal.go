package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The ack of every delivery waits for its commit's WAL flush, and what else
// writes WAL at that moment makes the flush longer (bench/README.md, Design
// decisions, "WAL settings"): a step's WAL per request says how much of that
// each delivery costs, and its full-page images how much of it a checkpoint
// adds.

// walSample is the server's WAL position and pg_stat_wal's counters at
// one moment.
type walSample struct {
	lsn         int64 // bytes since the start of the WAL
	fpi         int64
	records     int64
	checkpoints int64 // started, timed or requested (pg_stat_bgwriter; 0 where it has moved)
}

// walUse is the WAL written between two samples.
type walUse struct {
	Bytes          int64 `json:"bytes"`
	Records        int64 `json:"records"`
	FullPageImages int64 `json:"full_page_images"`
	Checkpoints    int64 `json:"checkpoints"`
}

// readWAL samples the WAL. The position is exact; pg_stat_wal's counters
// lag by up to a second (busy backends report them at most once a second),
// so a step's full-page images and records are off by about that much of
// the warm-up before it, which the step cannot pause for.
func readWAL(ctx context.Context, db *pgxpool.Pool) (walSample, error) {
	var s walSample
	err := db.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, wal_fpi, wal_records FROM pg_stat_wal`).
		Scan(&s.lsn, &s.fpi, &s.records)
	if err != nil {
		return s, fmt.Errorf("read WAL position: %w", err)
	}
	// PostgreSQL 17 moved the counts to pg_stat_checkpointer: a server
	// through DATABASE_URL may have either, and the count is only a
	// diagnosis.
	_ = db.QueryRow(ctx, `SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter`).Scan(&s.checkpoints)
	return s, nil
}

// walSpan samples the WAL now and returns what reads the WAL written since.
// A diagnostic column must not end a run: a server without pg_stat_wal
// (before PostgreSQL 14, through DATABASE_URL) gets a warning and zeros.
func walSpan(ctx context.Context, db *pgxpool.Pool, progress func(string, ...any)) func() walUse {
	from, err := readWAL(ctx, db)
	if err != nil {
		progress("warning: %v", err)
		return func() walUse { return walUse{} }
	}
	return func() walUse {
		to, err := readWAL(ctx, db)
		if err != nil {
			progress("warning: %v", err)
			return walUse{}
		}
		return to.since(from)
	}
}

func (s walSample) since(from walSample) walUse {
	return walUse{Bytes: s.lsn - from.lsn, Records: s.records - from.records, FullPageImages: s.fpi - from.fpi,
		Checkpoints: s.checkpoints - from.checkpoints}
}
