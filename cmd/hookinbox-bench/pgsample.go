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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A held step's ack tail grows with what the step has written
// (bench/README.md, "The held step"). -pg-sample reads the server's counters
// every interval during a step, so the growth can be seen as it happens:
// blocks read into the buffer pool and by which relation, the backends' own
// writes of dirty buffers, how long each WAL flush took, the full-page images
// in the WAL (a checkpoint's start makes the next change to every page write
// one), and where the checkpoints were.
//
// PostgreSQL 15 counts a block added to a relation (an insert extending
// the table, its TOAST table or an index) as a block read in its
// pg_statio views and pg_stat_database: at 4,800 deliveries/s two thirds
// of the "reads" were the inbox and its TOAST table growing. The sampler
// measures each relation's size too and tells the two apart.

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
	relationsRead  map[string]int64 // "table", "table (TOAST)", "index" → blocks read, added ones included
	relationsSize  map[string]int64 // the same relations' sizes in blocks
	autovacuumsNow int64            // autovacuum workers running at the moment
	horizonXIDs    int64            // how far back the oldest snapshot of another backend of this database reaches, in transaction ids
	horizonHolder  string           // that backend: its type, state and statement's start
	kernel         kernelWriteback  // the machine's dirty page cache and disk writes
}

// pgSample is what happened between two readings, per second.
type pgSample struct {
	At float64 `json:"at_s"` // seconds since the step's start, at the interval's end
	// BlocksRead are blocks read into the buffer pool, without the blocks
	// the user relations grew by (in older results files: with them).
	BlocksRead    float64 `json:"blocks_read_per_s"`
	BlocksAdded   float64 `json:"blocks_added_per_s,omitempty"` // the user relations' growth
	BackendWrites float64 `json:"backend_writes_per_s"`
	CleanerWrites float64 `json:"bgwriter_writes_per_s"`
	WALMBPerSec   float64 `json:"wal_mb_per_s"`
	MsPerWALSync  float64 `json:"ms_per_wal_sync,omitempty"`
	WALSyncs      float64 `json:"wal_syncs_per_s,omitempty"` // not in older results files
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
	// Waits is what the database's client backends were doing, read from
	// pg_stat_activity every waitSampleEvery: the mean number of backends
	// running a statement in each wait event ("CPU": in none), the most
	// first. A statement can be slow without any single one crossing
	// -pg-explain's threshold or log_lock_waits' (as in the held step's tail).
	Waits []backendWait `json:"waits,omitempty"`
	// KernelDirtyMB is the machine's dirty page cache at the interval's
	// end and DiskMBPerSec what the kernel wrote to its disks over it
	// (/proc/vmstat; not in older results files): a burst there is the
	// kernel's periodic writeback (kernel_writeback.go).
	KernelDirtyMB float64 `json:"kernel_dirty_mb,omitempty"`
	DiskMBPerSec  float64 `json:"disk_write_mb_per_s,omitempty"`
	// HorizonXIDs is how many transactions back the oldest snapshot of
	// another backend reached at the interval's end, and HorizonHolder
	// that backend. No vacuum, nor an index scan marking entries dead,
	// removes a row version that snapshot may see: while one is held, a
	// table updated in place (the destination's slots, its due sends)
	// grows by every update, and each read walks the dead versions.
	HorizonXIDs   int64  `json:"horizon_xids,omitempty"`
	HorizonHolder string `json:"horizon_holder,omitempty"`
}

// backendWait is the mean number of active backends in one wait event.
type backendWait struct {
	Event string  `json:"event"` // "LWLock:WALWrite", "IO:WALSync", "CPU" …
	Mean  float64 `json:"mean"`
}

// waitSampleEvery is how often the sampler reads pg_stat_activity's wait
// events, and waitsShown how many a sample names.
const (
	waitSampleEvery = 100 * time.Millisecond
	waitsShown      = 4
)

// backendWaitsSQL counts the client backends running a statement by wait
// event, and autovacuum's workers apart ("autovacuum …"): what the vacuum
// itself waits on tells what it makes the others wait for.
const backendWaitsSQL = `SELECT CASE WHEN backend_type = 'autovacuum worker' THEN 'autovacuum ' ELSE '' END
		|| coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*)
	FROM pg_stat_activity
	WHERE datname = current_database() AND pid <> pg_backend_pid()
	  AND ((backend_type = 'client backend' AND state = 'active') OR backend_type = 'autovacuum worker')
	GROUP BY 1`

// waitTally counts the wait events seen over the readings of an interval.
type waitTally struct {
	readings int
	counts   map[string]int64
}

// read adds one reading of pg_stat_activity.
func (w *waitTally) read(ctx context.Context, db *pgxpool.Pool) error {
	rows, err := db.Query(ctx, backendWaitsSQL)
	if err != nil {
		return err
	}
	var (
		event string
		n     int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&event, &n}, func() error {
		if w.counts == nil {
			w.counts = map[string]int64{}
		}
		w.counts[event] += n
		return nil
	}); err != nil {
		return err
	}
	w.readings++
	return nil
}

// means are the tally's waits, the most first, at most waitsShown.
func (w waitTally) means() []backendWait {
	if w.readings == 0 {
		return nil
	}
	var out []backendWait
	for _, event := range slices.Sorted(maps.Keys(w.counts)) {
		out = append(out, backendWait{Event: event, Mean: float64(w.counts[event]) / float64(w.readings)})
	}
	slices.SortStableFunc(out, func(x, y backendWait) int { return cmp.Compare(y.Mean, x.Mean) })
	return out[:min(len(out), waitsShown)]
}

// relationRead is one relation's blocks read per second in an interval,
// without the blocks it grew by.
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
		LEFT JOIN pg_class c ON c.oid = m.relid AND m.datname = current_database()),
	coalesce((SELECT max(age(backend_xmin)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()), 0),
	coalesce((SELECT backend_type || ' ' || coalesce(state, '') || coalesce(' ' || wait_event, '') || ', in its statement for '
			|| round(extract(epoch FROM clock_timestamp() - query_start) * 1000) || ' ms: '
			|| left(regexp_replace(query, '\s+', ' ', 'g'), 60)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
		ORDER BY age(backend_xmin) DESC LIMIT 1), '')`

// relationsReadSQL counts each relation's block reads and size. A
// partition counts as its partitioned table, and a partition's index as
// the partitioned index: the inbox reads as one table however many
// partitions it has.
const relationsReadSQL = `SELECT coalesce(pg_partition_root(s.relid), s.relid)::regclass::text, coalesce(s.heap_blks_read, 0), pg_relation_size(s.relid) / 8192
	FROM pg_statio_user_tables s
	UNION ALL SELECT coalesce(pg_partition_root(s.relid), s.relid)::regclass::text || ' (TOAST)', coalesce(s.toast_blks_read, 0), coalesce(pg_relation_size(nullif(c.reltoastrelid, 0)), 0) / 8192
	FROM pg_statio_user_tables s JOIN pg_class c ON c.oid = s.relid
	UNION ALL SELECT coalesce(pg_partition_root(indexrelid), indexrelid)::regclass::text, coalesce(idx_blks_read, 0), pg_relation_size(indexrelid) / 8192 FROM pg_statio_user_indexes`

// readPGCounters reads the counters. PostgreSQL 17 moved buffers_backend
// out of pg_stat_bgwriter: through DATABASE_URL the query may fail, and the
// caller stops sampling with a warning.
func readPGCounters(ctx context.Context, db *pgxpool.Pool) (pgCounters, error) {
	c := pgCounters{at: time.Now(), relationsRead: map[string]int64{}, relationsSize: map[string]int64{}}
	c.cpuBusy, c.cpuIdle, _, _ = machineCPU()
	c.kernel = readKernelWriteback()
	if err := db.QueryRow(ctx, pgCountersSQL).Scan(&c.blocksRead, &c.backendWrites, &c.cleanerWrites,
		&c.walBytes, &c.walSyncs, &c.walSyncMs, &c.autovacuumsNow,
		&c.walFPI, &c.checkpoints, &c.ckptWrites, &c.checkpointer, &c.maintaining,
		&c.horizonXIDs, &c.horizonHolder); err != nil {
		return c, fmt.Errorf("pg-sample: %w", err)
	}
	rows, err := db.Query(ctx, relationsReadSQL)
	if err != nil {
		return c, fmt.Errorf("pg-sample: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n, size int64
		if err := rows.Scan(&name, &n, &size); err != nil {
			return c, fmt.Errorf("pg-sample: %w", err)
		}
		c.relationsRead[name] += n
		c.relationsSize[name] += size
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
		KernelDirtyMB:  float64(c.kernel.dirtyBytes) / 1e6,
		DiskMBPerSec:   per(c.kernel.writtenBytes, prev.kernel.writtenBytes) / 1e6,
		HorizonXIDs:    c.horizonXIDs,
		HorizonHolder:  c.horizonHolder,
	}
	if busy, all := c.cpuBusy-prev.cpuBusy, c.cpuBusy-prev.cpuBusy+c.cpuIdle-prev.cpuIdle; all > 0 {
		s.MachineBusy = busy / all
	}
	if syncs := c.walSyncs - prev.walSyncs; syncs > 0 {
		s.MsPerWALSync = (c.walSyncMs - prev.walSyncMs) / float64(syncs)
		s.WALSyncs = float64(syncs) / secs
	}
	var added int64
	for _, name := range slices.Sorted(maps.Keys(c.relationsRead)) {
		grew := max(0, c.relationsSize[name]-prev.relationsSize[name])
		added += grew
		if d := c.relationsRead[name] - prev.relationsRead[name] - grew; d > 0 {
			s.TopReads = append(s.TopReads, relationRead{Relation: name, PerSec: float64(d) / secs})
		}
	}
	s.BlocksAdded = float64(added) / secs
	s.BlocksRead = max(0, s.BlocksRead-s.BlocksAdded)
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
	var (
		samples []pgSample
		waits   waitTally
	)
	tick, waitTick := time.NewTicker(every), time.NewTicker(waitSampleEvery)
	defer tick.Stop()
	defer waitTick.Stop()
	for {
		select {
		case <-stop:
			return samples
		case <-ctx.Done():
			return samples
		case <-waitTick.C:
			if err := waits.read(ctx, db); err != nil {
				progress("warning: pg-sample: backend waits: %v", err)
				waitTick.Stop()
			}
			continue
		case <-tick.C:
		}
		c, err := readPGCounters(ctx, db)
		if err != nil {
			progress("warning: %v", err)
			return samples
		}
		s := c.since(prev, start)
		s.Waits, waits = waits.means(), waitTally{}
		samples = append(samples, s)
		prev = c
	}
}

// sampleDuring samples the counters every interval (none when every is 0)
// until the returned function is called, which returns the samples.
func sampleDuring(ctx context.Context, db *pgxpool.Pool, every time.Duration, progress func(string, ...any)) func() []pgSample {
	if every <= 0 {
		return func() []pgSample { return nil }
	}
	stop, sampled := make(chan struct{}), make(chan []pgSample, 1)
	go func() { sampled <- samplePG(ctx, db, every, stop, progress) }()
	return func() []pgSample {
		close(stop)
		return <-sampled
	}
}

// printPGSamples prints a step's samples, one line each.
func printPGSamples(w io.Writer, samples []pgSample) {
	if len(samples) == 0 {
		return
	}
	fmt.Fprintln(w, "      at  busy  dirty MB  disk MB/s  blocks read/s  added/s  backend writes/s  bgwriter/s  checkpoint writes/s  WAL MB/s  FPI/s  syncs/s × ms  autovacuum  checkpointer now (+ started)  most read (blocks/s); vacuum, analyze now; backends in each wait (mean)")
	for _, s := range samples {
		reads := make([]string, len(s.TopReads))
		for i, r := range s.TopReads {
			reads[i] = fmt.Sprintf("%s %.0f", r.Relation, r.PerSec)
		}
		sync := "–"
		if s.MsPerWALSync > 0 {
			sync = fmt.Sprintf("%.2f", s.MsPerWALSync)
		}
		if s.WALSyncs > 0 {
			sync = fmt.Sprintf("%.0f× %s", s.WALSyncs, sync)
		}
		ckpt := s.Checkpointer
		if s.Checkpoints > 0 {
			ckpt += fmt.Sprintf(" (+%d)", s.Checkpoints)
		}
		maintaining := ""
		if s.Maintaining != "" {
			maintaining = "; " + s.Maintaining
		}
		if len(s.Waits) > 0 {
			waits := make([]string, len(s.Waits))
			for i, w := range s.Waits {
				waits[i] = fmt.Sprintf("%s %.1f", w.Event, w.Mean)
			}
			maintaining += "; " + strings.Join(waits, ", ")
		}
		if s.HorizonHolder != "" {
			maintaining += fmt.Sprintf("; oldest snapshot %d xids back: %s", s.HorizonXIDs, s.HorizonHolder)
		}
		busy := "   –" // results written before the busy share was read
		if s.MachineBusy > 0 {
			busy = fmt.Sprintf("%3.0f%%", s.MachineBusy*100)
		}
		added := "      –" // results written before the growth was told apart
		if s.BlocksAdded > 0 {
			added = fmt.Sprintf("%7.0f", s.BlocksAdded)
		}
		kernel := "       –          –" // older results files
		if s.KernelDirtyMB > 0 || s.DiskMBPerSec > 0 {
			kernel = fmt.Sprintf("%8.0f  %9.1f", s.KernelDirtyMB, s.DiskMBPerSec)
		}
		fmt.Fprintf(w, "  %5.0fs  %s  %s  %13.0f  %s  %16.0f  %10.0f  %19.0f  %8.1f  %5.0f  %11s  %10d  %-25s  %s%s\n", s.At, busy, kernel, s.BlocksRead,
			added, s.BackendWrites, s.CleanerWrites, s.CkptWrites, s.WALMBPerSec, s.FPIPerSec, sync, s.AutovacuumsNow, ckpt,
			strings.Join(reads, ", "), maintaining)
	}
}
