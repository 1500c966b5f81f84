package migrations_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/migrations"
)

func TestMain(m *testing.M) { testdb.Main(m) }

var emptyCounter atomic.Int64

// emptyDatabase returns a pool on a database with no schema at all.
func emptyDatabase(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, testdb.AdminURL())
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	name := fmt.Sprintf("migrations_empty_%d", emptyCounter.Add(1))
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)") })

	u, err := url.Parse(testdb.AdminURL())
	require.NoError(t, err)
	u.Path = "/" + name
	pool, err := pgxpool.New(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// riverMigrated is an empty database with River's tables and a function
// that applies hookinbox's migrations from version from to version to, for
// tests of what a migration does to rows an older schema holds.
func riverMigrated(t *testing.T) (*pgxpool.Pool, func(from, to int)) {
	t.Helper()
	ctx := context.Background()
	pool := emptyDatabase(t)
	river, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	require.NoError(t, err)
	_, err = river.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	all, err := migrations.All()
	require.NoError(t, err)
	return pool, func(from, to int) {
		t.Helper()
		for _, m := range all {
			if m.Version >= from && m.Version <= to {
				_, err := pool.Exec(ctx, m.SQL)
				require.NoError(t, err, "%03d_%s", m.Version, m.Name)
			}
		}
	}
}

func TestUpIsIdempotentAndCheckAgrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDatabase(t)

	require.ErrorIs(t, migrations.Check(ctx, pool), migrations.ErrNotMigrated)

	first, err := migrations.Up(ctx, pool, nil)
	require.NoError(t, err)
	all, err := migrations.All()
	require.NoError(t, err)
	require.Len(t, first.HookinboxVersions, len(all))
	require.NotEmpty(t, first.RiverVersions)
	require.NoError(t, migrations.Check(ctx, pool))

	second, err := migrations.Up(ctx, pool, nil)
	require.NoError(t, err)
	require.Empty(t, second.HookinboxVersions)
	require.Empty(t, second.RiverVersions)
}

// Replicas starting together: the advisory lock makes each step run once.
func TestConcurrentUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	applied := make([]int, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := migrations.Up(ctx, pool, nil)
			errs[i], applied[i] = err, len(res.HookinboxVersions)
		}()
	}
	wg.Wait()
	all, _ := migrations.All()
	total := 0
	for i := range errs {
		require.NoError(t, errs[i])
		total += applied[i]
	}
	require.Equal(t, len(all), total, "each migration applied exactly once")
}

// Payloads are compressed with lz4 where the server has it, as the
// embedded one (Debian's PostgreSQL) does.
func TestPayloadsAreLZ4Compressed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDatabase(t)
	// SET LOCAL in a transaction rolled back: the probe leaves the
	// session's default (pglz) as it was.
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, probe := tx.Exec(ctx, "SET LOCAL default_toast_compression = 'lz4'")
	require.NoError(t, tx.Rollback(ctx))
	if probe != nil {
		t.Skipf("this PostgreSQL has no lz4 (%v): the migration keeps pglz", probe)
	}
	_, err = migrations.Up(ctx, pool, nil)
	require.NoError(t, err)

	// A JSON payload big enough for TOAST to compress (over ~2 KB).
	payload := []byte(`{"commits":[` + strings.Repeat(`{"id":"0123456789abcdef","message":"fix"},`, 100) + `{}]}`)
	_, err = pool.Exec(ctx, `INSERT INTO inbox (id, source, delivery_id, event_type, payload, payload_sha256)
		VALUES (nextval('inbox_id_seq'), 'github', 'd1', 'push', $1, '\x00')`, payload)
	require.NoError(t, err)
	var method string
	require.NoError(t, pool.QueryRow(ctx, `SELECT pg_column_compression(payload) FROM inbox`).Scan(&method))
	require.Equal(t, "lz4", method)
}

// ANALYZE skips the inbox's payload and headers, and the columns no query
// filters on: no query reads their statistics, and building them was most
// of an autoanalyze's CPU (migrations 015 and 028).
func TestInboxAnalyzeSkipsPayloadAndHeaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDatabase(t)
	_, err := migrations.Up(ctx, pool, nil)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbox (id, source, delivery_id, event_type, headers, payload, payload_sha256)
		SELECT nextval('inbox_id_seq'), 'github', 'd' || g, 'issues', '{"X-GitHub-Event": "issues"}', convert_to('{"n":' || g || '}', 'UTF8'), '\x00'
		FROM generate_series(1, 100) g`)
	require.NoError(t, err)
	analyzed := analyzedColumns(ctx, t, pool, "inbox")
	require.Contains(t, analyzed, "event_type", "the columns queries filter on are analyzed")
	for _, col := range []string{"payload", "headers", "delivery_id", "payload_sha256", "body_key"} {
		require.NotContains(t, analyzed, col)
	}
}

// ANALYZE skips what no query of hookinbox's reads on river_job.
func TestRiverJobAnalyzeSkipsArgsAndMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyDatabase(t)
	_, err := migrations.Up(ctx, pool, nil)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO river_job (kind, args, metadata, attempted_by, errors, tags, state, finalized_at)
		SELECT 'process_delivery', jsonb_build_object('inbox_id', g), '{"k": 1}', '{host}', ARRAY['{"error": "e"}'::jsonb], '{t}',
			'completed', now()
		FROM generate_series(1, 100) g`)
	require.NoError(t, err)
	analyzed := analyzedColumns(ctx, t, pool, "river_job")
	require.Contains(t, analyzed, "state", "the columns River's queries filter on are analyzed")
	require.Contains(t, analyzed, "kind")
	for _, skipped := range []string{"args", "metadata", "attempted_by", "errors", "tags"} {
		require.NotContains(t, analyzed, skipped)
	}
	// The expression index a delivery's jobs are found by keeps its own.
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_stats
		WHERE tablename = 'river_job_process_delivery_inbox_idx'`).Scan(&n))
	require.Equal(t, 1, n)
}

// analyzedColumns analyzes table and returns the columns it has
// statistics for.
func analyzedColumns(ctx context.Context, t *testing.T, pool *pgxpool.Pool, table string) []string {
	t.Helper()
	_, err := pool.Exec(ctx, "ANALYZE "+pgx.Identifier{table}.Sanitize())
	require.NoError(t, err)
	rows, err := pool.Query(ctx, "SELECT attname FROM pg_stats WHERE tablename = $1 ORDER BY attname", table)
	require.NoError(t, err)
	analyzed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return analyzed
}

// docs/handlers.md's handler example once told users to add a 003 that clashed
// with ours: the error must name both files and say what to do.
func TestVersionClashNamesBothFiles(t *testing.T) {
	t.Parallel()
	sql := &fstest.MapFile{Data: []byte("SELECT 1")}
	_, err := migrations.AllFrom(fstest.MapFS{
		"001_inbox.up.sql": sql, "003_inbox_origin.up.sql": sql, "003_release_notice.up.sql": sql, "005_lz4.up.sql": sql,
	})
	require.ErrorIs(t, err, migrations.ErrInvalidFiles)
	require.EqualError(t, err, "invalid migration files: 003_inbox_origin.up.sql and 003_release_notice.up.sql both have version 3; "+
		"rename one of them to the next free version, 006")

	_, err = migrations.AllFrom(fstest.MapFS{"release_notice.up.sql": sql})
	require.ErrorIs(t, err, migrations.ErrInvalidFiles)
	require.ErrorContains(t, err, "release_notice.up.sql: the name must start with a positive version")

	all, err := migrations.All()
	require.NoError(t, err, "the shipped files")
	require.Equal(t, "001_inbox.up.sql", all[0].File)
}
