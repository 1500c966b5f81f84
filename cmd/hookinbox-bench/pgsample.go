package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A held step's ack tail grows with what the step has written (bench/README.md,
// "Stop 33", "Stop 34"). -pg-sample reads the server's counters every
// interval during a step, so the growth can be seen as it happens: blocks
// read into the buffer pool and by which relation, the backends' own writes
// of dirty buffers, how long each WAL flush took, the full-page images in
// the WAL (a checkpoint's start makes the next change to every page write
// one), and where the checkpoints were.

// pgCounters are cumulative counters of the server and the step's database
// at one moment.
type pgCounters struct {
	at             time.Time
	blocksRead     int64 // pg_stat_database, this database
	backendWrites  int64 // pg_stat_bgwriter.buffers_backend
	cleanerWrites  int64 // pg_stat_bgwriter.buffers_clean
	walBytes       int64
	walSyncs       int64
	walSyncMs      float64 // 0 unless track_wal_io_timing is on
	walFPI         int64   // pg_stat_wal.wal_fpi
	checkpoints    int64   // pg_stat_bgwriter: timed and requested (counted as they start)
	ckptWrites     int64   // pg_stat_bgwriter.buffers_checkpoint
	checkpointer   string  // the checkpointer's wait event at the moment
	maintaining    string  // what VACUUM and ANALYZE are working on at the moment
	cpuBusy        float64 // the machine's busy and idle CPU seconds (/proc/stat)
	cpuIdle        float64
	relationsRead  map[string]int64 // "table", "table (TOAST)", "index" → blocks read
	autovacuumsNow int64            // autovacuum workers running at the moment
}

// pgSample is what happened between two readings, per second.
type pgSample struct {
	At            float64 `json:"at_s"` // seconds since the step's start, at the interval's end
	BlocksRead    float64 `json:"blocks_read_per_s"`
	BackendWrites float64 `json:"backend_writes_per_s"`
	CleanerWrites float64 `json:"bgwriter_writes_per_s"`
	WALMBPerSec   float64 `json:"wal_mb_per_s"`
	MsPerWALSync  float64 `json:"ms_per_wal_sync,omitempty"`
	FPIPerSec     float64 `json:"fpi_per_s"`
	CkptWrites    float64 `json:"checkpoint_writes_per_s"`
	Checkpoints   int64   `json:"checkpoints_started"` // PostgreSQL 15 counts a checkpoint as it begins
	Checkpointer  string  `json:"checkpointer,omitempty"`
	Maintaining   string  `json:"maintaining,omitempty"` // e.g. "vacuum river_job (scanning heap)"
	// MachineBusy is the share of the machine's CPU time busy: the step's
	// held tail follows it where PostgreSQL's own counters do not tell.
	MachineBusy    float64        `json:"machine_busy"`
	TopReads       []relationRead `json:"top_reads,omitempty"`
	AutovacuumsNow int64          `json:"autovacuum_workers"`
}

// relationRead is one relation's blocks read per second in an interval.
type relationRead struct {
	Relation string  `json:"relation"`
	PerSec   float64 `json:"per_s"`
}

// topReadsShown is how many relations a sample names.
const topReadsShown = 4

const pgCountersSQL = `SELECT
	(SELECT blks_read FROM pg_stat_database WHERE datname = current_database()),
	(SELECT buffers_backend FROM pg_stat_bgwriter), (SELECT buffers_clean FROM pg_stat_bgwriter),
	(SELECT wal_bytes::bigint FROM pg_stat_wal), (SELECT wal_sync FROM pg_stat_wal), (SELECT wal_sync_time FROM pg_stat_wal),
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'),
	(SELECT wal_fpi FROM pg_stat_wal),
	(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter), (SELECT buffers_checkpoint FROM pg_stat_bgwriter),
	(SELECT coalesce(max(wait_event), 'on CPU') FROM pg_stat_activity WHERE backend_type = 'checkpointer'),
	(SELECT coalesce(string_agg(m.what || ' ' || coalesce(c.relname, m.datname || '.' || m.relid) || ' (' || m.phase || ')', ', '), '')
		FROM (SELECT 'vacuum' AS what, datname, relid, phase FROM pg_stat_progress_vacuum
			UNION ALL SELECT 'analyze', datname, relid, phase FROM pg_stat_progress_analyze) m
		LEFT JOIN pg_class c ON c.oid = m.relid AND m.datname = current_database())`

const relationsReadSQL = `SELECT relname, coalesce(heap_blks_read, 0) FROM pg_statio_user_tables
	UNION ALL SELECT relname || ' (TOAST)', coalesce(toast_blks_read, 0) FROM pg_statio_user_tables
	UNION ALL SELECT indexrelname, coalesce(idx_blks_read, 0) FROM pg_statio_user_indexes`

// readPGCounters reads the counters. PostgreSQL 17 moved buffers_backend
// out of pg_stat_bgwriter: through DATABASE_URL the query may fail, and the
// caller stops sampling with a warning.
func readPGCounters(ctx context.Context, db *pgxpool.Pool) (pgCounters, error) {
	c := pgCounters{at: time.Now(), relationsRead: map[string]int64{}}
	c.cpuBusy, c.cpuIdle, _, _ = machineCPU()
	if err := db.QueryRow(ctx, pgCountersSQL).Scan(&c.blocksRead, &c.backendWrites, &c.cleanerWrites,
		&c.walBytes, &c.walSyncs, &c.walSyncMs, &c.autovacuumsNow,
		&c.walFPI, &c.checkpoints, &c.ckptWrites, &c.checkpointer, &c.maintaining); err != nil {
		return c, fmt.Errorf("pg-sample: %w", err)
	}
	rows, err := db.Query(ctx, relationsReadSQL)
	if err != nil {
		return c, fmt.Errorf("pg-sample: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return c, fmt.Errorf("pg-sample: %w", err)
		}
		c.relationsRead[name] = n
	}
	return c, rows.Err()
}

// since is the sample from prev to c, stamped at seconds since start.
func (c pgCounters) since(prev pgCounters, start time.Time) pgSample {
	secs := c.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		return pgSample{At: c.at.Sub(start).Seconds()}
	}
	per := func(a, b int64) float64 { return float64(a-b) / secs }
	s := pgSample{
		At:             c.at.Sub(start).Seconds(),
		BlocksRead:     per(c.blocksRead, prev.blocksRead),
		BackendWrites:  per(c.backendWrites, prev.backendWrites),
		CleanerWrites:  per(c.cleanerWrites, prev.cleanerWrites),
		WALMBPerSec:    per(c.walBytes, prev.walBytes) / 1e6,
		AutovacuumsNow: c.autovacuumsNow,
		FPIPerSec:      per(c.walFPI, prev.walFPI),
		CkptWrites:     per(c.ckptWrites, prev.ckptWrites),
		Checkpoints:    c.checkpoints - prev.checkpoints,
		Checkpointer:   c.checkpointer,
		Maintaining:    c.maintaining,
	}
	if busy, all := c.cpuBusy-prev.cpuBusy, c.cpuBusy-prev.cpuBusy+c.cpuIdle-prev.cpuIdle; all > 0 {
		s.MachineBusy = busy / all
	}
	if syncs := c.walSyncs - prev.walSyncs; syncs > 0 {
		s.MsPerWALSync = (c.walSyncMs - prev.walSyncMs) / float64(syncs)
	}
	for _, name := range slices.Sorted(maps.Keys(c.relationsRead)) {
		if d := c.relationsRead[name] - prev.relationsRead[name]; d > 0 {
			s.TopReads = append(s.TopReads, relationRead{Relation: name, PerSec: float64(d) / secs})
		}
	}
	slices.SortStableFunc(s.TopReads, func(x, y relationRead) int { return cmp.Compare(y.PerSec, x.PerSec) })
	s.TopReads = s.TopReads[:min(len(s.TopReads), topReadsShown)]
	return s
}

// samplePG reads the counters every interval until stop is closed and
// returns the samples. A failed reading ends the sampling with a warning:
// it is a diagnosis and must not end the run.
func samplePG(ctx context.Context, db *pgxpool.Pool, every time.Duration, stop <-chan struct{},
	progress func(string, ...any)) []pgSample {
	start := time.Now()
	prev, err := readPGCounters(ctx, db)
	if err != nil {
		progress("warning: %v", err)
		return nil
	}
	var samples []pgSample
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return samples
		case <-ctx.Done():
			return samples
		case <-tick.C:
		}
		c, err := readPGCounters(ctx, db)
		if err != nil {
			progress("warning: %v", err)
			return samples
		}
		samples = append(samples, c.since(prev, start))
		prev = c
	}
}

// printPGSamples prints a step's samples, one line each.
func printPGSamples(w io.Writer, samples []pgSample) {
	if len(samples) == 0 {
		return
	}
	fmt.Fprintln(w, "      at  busy  blocks read/s  backend writes/s  bgwriter/s  checkpoint writes/s  WAL MB/s  FPI/s  ms/WAL sync  autovacuum  checkpointer now (+ started)  most read (blocks/s); vacuum, analyze now")
	for _, s := range samples {
		reads := make([]string, len(s.TopReads))
		for i, r := range s.TopReads {
			reads[i] = fmt.Sprintf("%s %.0f", r.Relation, r.PerSec)
		}
		sync := "–"
		if s.MsPerWALSync > 0 {
			sync = fmt.Sprintf("%.2f", s.MsPerWALSync)
		}
		ckpt := s.Checkpointer
		if s.Checkpoints > 0 {
			ckpt += fmt.Sprintf(" (+%d)", s.Checkpoints)
		}
		maintaining := ""
		if s.Maintaining != "" {
			maintaining = "; " + s.Maintaining
		}
		busy := "   –" // results written before the busy share was read
		if s.MachineBusy > 0 {
			busy = fmt.Sprintf("%3.0f%%", s.MachineBusy*100)
		}
		fmt.Fprintf(w, "  %5.0fs  %s  %13.0f  %16.0f  %10.0f  %19.0f  %8.1f  %5.0f  %11s  %10d  %-25s  %s%s\n", s.At, busy, s.BlocksRead,
			s.BackendWrites, s.CleanerWrites, s.CkptWrites, s.WALMBPerSec, s.FPIPerSec, sync, s.AutovacuumsNow, ckpt,
			strings.Join(reads, ", "), maintaining)
	}
}
