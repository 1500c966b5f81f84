package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestPGCountersSince(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	prev := pgCounters{at: start.Add(10 * time.Second), blocksRead: 1_000, backendWrites: 100, cleanerWrites: 50,
		walBytes: 10e6, walSyncs: 100, walSyncMs: 40, walFPI: 15_500, checkpoints: 3, ckptWrites: 19_000,
		cpuBusy: 100, cpuIdle: 300, kernel: kernelWriteback{dirtyBytes: 700e6, writtenBytes: 1e9},
		relationsRead: map[string]int64{"river_job": 10, "inbox": 5, "inbox (TOAST)": 0, "inbox_pkey": 1, "idle": 7},
		relationsSize: map[string]int64{"river_job": 100, "inbox": 50, "inbox (TOAST)": 0, "inbox_pkey": 10, "idle": 70}}
	cur := pgCounters{at: start.Add(20 * time.Second), blocksRead: 21_000, backendWrites: 600, cleanerWrites: 5_050,
		walBytes: 150e6, walSyncs: 3_100, walSyncMs: 1_540, autovacuumsNow: 1, walFPI: 30_500, checkpoints: 4,
		ckptWrites: 29_000, checkpointer: "CheckpointWriteDelay", maintaining: "vacuum river_job (scanning heap)",
		cpuBusy: 115, cpuIdle: 305, kernel: kernelWriteback{dirtyBytes: 250e6, writtenBytes: 4e9},
		relationsRead: map[string]int64{"river_job": 26_010, "inbox": 4_005, "inbox (TOAST)": 5_000, "inbox_pkey": 2_001, "idle": 7, "new_idx": 1_000},
		// The inbox grew by 3,000 blocks and its TOAST table by every block
		// it "read"; a vacuum truncated idle.
		relationsSize: map[string]int64{"river_job": 100, "inbox": 3_050, "inbox (TOAST)": 5_000, "inbox_pkey": 10, "idle": 20, "new_idx": 1_000}}

	s := cur.since(prev, start)
	require.Equal(t, 20.0, s.At)
	require.Equal(t, 1_100.0, s.BlocksRead, "20,000 blocks read less the 9,000 the relations grew by, over 10 s")
	require.Equal(t, 900.0, s.BlocksAdded)
	require.Equal(t, 50.0, s.BackendWrites)
	require.Equal(t, 500.0, s.CleanerWrites)
	require.Equal(t, 14.0, s.WALMBPerSec)
	require.Equal(t, 0.5, s.MsPerWALSync)
	require.Equal(t, 300.0, s.WALSyncs)
	require.Equal(t, int64(1), s.AutovacuumsNow)
	require.Equal(t, 1_500.0, s.FPIPerSec)
	require.Equal(t, 1_000.0, s.CkptWrites)
	require.Equal(t, int64(1), s.Checkpoints)
	require.Equal(t, 0.75, s.MachineBusy, "15 of 20 CPU seconds busy")
	require.Equal(t, 250.0, s.KernelDirtyMB, "the dirty page cache at the interval's end")
	require.Equal(t, 300.0, s.DiskMBPerSec, "3 GB written to the disks over 10 s")
	require.Equal(t, []relationRead{{"river_job", 2_600}, {"inbox_pkey", 200}, {"inbox", 100}}, s.TopReads,
		"the most read first, at most topReadsShown, none that read nothing but the blocks it grew by")

	// No WAL flush in the interval: no ms per sync rather than a division by zero.
	cur.walSyncs, cur.walSyncMs = prev.walSyncs, prev.walSyncMs
	require.Zero(t, cur.since(prev, start).MsPerWALSync)

	var out bytes.Buffer
	printPGSamples(&out, []pgSample{s})
	require.Contains(t, out.String(), "river_job 2600, inbox_pkey 200, inbox 100")
	require.Contains(t, out.String(), "300× 0.50")
	require.Contains(t, out.String(), "CheckpointWriteDelay (+1)")
	require.Contains(t, out.String(), " 75% ")
	require.Contains(t, out.String(), "inbox 100; vacuum river_job (scanning heap)")
	require.Contains(t, out.String(), "   1100      900  ")
	require.Contains(t, out.String(), " 75%       250      300.0  ")
}

// The counters' SQL against a real server: every column exists, the inbox
// and its TOAST and indexes are among the relations, and writes move the
// WAL. (The test server runs without fsync, so its WAL syncs stay put.)
func TestReadPGCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	before, err := readPGCounters(ctx, db)
	require.NoError(t, err)
	for _, rel := range []string{"inbox", "inbox (TOAST)", "inbox_pkey", "inbox_key_g0_pkey", "river_job", "river_job_pkey"} {
		require.Contains(t, before.relationsRead, rel)
	}
	_, err = db.Exec(ctx, `CREATE TABLE pg_sample_probe AS SELECT g AS n, repeat('x', 200) AS pad FROM generate_series(1, 20000) g`)
	require.NoError(t, err)
	// Backends report their WAL counters at most once a second.
	after := readPGCountersUntil(t, db, func(c pgCounters) bool { return c.walBytes > before.walBytes },
		"the CREATE's WAL never showed in pg_stat_wal")
	require.Contains(t, after.relationsRead, "pg_sample_probe")
	require.NotContains(t, after.relationsRead, "inbox_p1", "partitions count as their table")
	require.Greater(t, after.relationsSize["pg_sample_probe"], int64(100), "20,000 rows of 200 bytes take hundreds of blocks")
	s := after.since(before, before.at)
	require.Positive(t, s.WALMBPerSec)
	require.Positive(t, after.cpuBusy, "the machine's CPU seconds were read")

	// A checkpoint is counted. The checkpointer reports its counters after
	// the CHECKPOINT it ran has returned, so the count may lag. (The test
	// server runs with full_page_writes off, so its WAL has no full-page
	// images to count.)
	_, err = db.Exec(ctx, `CHECKPOINT`)
	require.NoError(t, err)
	later := readPGCountersUntil(t, db, func(c pgCounters) bool { return c.checkpoints > after.checkpoints },
		"the CHECKPOINT never showed in pg_stat_bgwriter")
	require.NotEmpty(t, later.checkpointer)
}

// The oldest snapshot another backend holds is read, with what holds it:
// here a transaction left open while three others commit.
func TestReadPGCountersHorizon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	holder, err := db.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = holder.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
	require.NoError(t, err)
	_, err = holder.Exec(ctx, "SELECT 1 FROM inbox LIMIT 1")
	require.NoError(t, err)
	for range 3 {
		_, err := db.Exec(ctx, "SELECT txid_current()")
		require.NoError(t, err)
	}
	c, err := readPGCounters(ctx, db)
	require.NoError(t, err)
	require.GreaterOrEqual(t, c.horizonXIDs, int64(3))
	require.Contains(t, c.horizonHolder, "client backend idle in transaction")
	require.Contains(t, c.horizonHolder, "SELECT 1 FROM inbox LIMIT 1")

	var out bytes.Buffer
	printPGSamples(&out, []pgSample{c.since(pgCounters{at: c.at.Add(-time.Second)}, c.at)})
	require.Contains(t, out.String(), "oldest snapshot ")
	require.Contains(t, out.String(), " xids back: client backend idle in transaction")
}

// readPGCountersUntil reads the counters until done accepts them: the
// server reports some of them a while after the work that moves them.
func readPGCountersUntil(t *testing.T, db *pgxpool.Pool, done func(pgCounters) bool, msg string) pgCounters {
	t.Helper()
	var (
		c   pgCounters
		err error
	)
	require.Eventually(t, func() bool {
		c, err = readPGCounters(context.Background(), db)
		return err == nil && done(c)
	}, 10*time.Second, 50*time.Millisecond, msg)
	require.NoError(t, err)
	return c
}

// The wait-event tally: the mean backends per wait over its readings, the
// most first, and a real backend's wait seen in pg_stat_activity.
func TestWaitTally(t *testing.T) {
	t.Parallel()
	w := waitTally{readings: 10, counts: map[string]int64{"CPU": 30, "LWLock:WALWrite": 10, "IO:WALSync": 5, "Lock:extend": 2, "IO:DataFileRead": 1}}
	require.Equal(t, []backendWait{{"CPU", 3}, {"LWLock:WALWrite", 1}, {"IO:WALSync", 0.5}, {"Lock:extend", 0.2}}, w.means())
	require.Empty(t, waitTally{}.means(), "no reading, no means")

	ctx := context.Background()
	db := testdb.New(t)
	sleeping := make(chan error, 1)
	go func() {
		_, err := db.Exec(ctx, "SELECT pg_sleep(3)")
		sleeping <- err
	}()
	var got waitTally
	require.Eventually(t, func() bool {
		got = waitTally{}
		require.NoError(t, got.read(ctx, db))
		return got.counts["Timeout:PgSleep"] == 1
	}, 3*time.Second, 20*time.Millisecond, "the sleeping backend's wait was never read")
	require.Equal(t, 1, got.readings)
	require.NotContains(t, got.counts, "Client:ClientRead", "the sampler's own backend and idle ones are not counted")
	require.NoError(t, <-sleeping)
}
