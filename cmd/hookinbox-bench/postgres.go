package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/pgembed"
	"github.com/hookinbox/hookinbox/migrations"
)

// postgres is the server the run uses: a private one started with pgembed,
// or the one DATABASE_URL names. Either way the run works in databases it
// creates and drops, never in the one the URL names.
type postgres struct {
	adminURL string          // may create databases
	server   *pgembed.Server // nil with DATABASE_URL
	binDir   string          // pgbench lives here
	created  []string

	// statsConns read each created database's statistics
	// (autovacuumRuns), one connection per database opened when it is
	// created. A connection is a new backend process, and on the 2-core
	// reference VM bursts of process starts stall the service's commits
	// for up to a tenth of a second (bench/README.md, "Steady load, one
	// default serve": procs): opened at each span's first reading, it
	// started one right where every measured step begins.
	statsMu    sync.Mutex
	statsConns map[string]*pgx.Conn // by URL
}

// startPostgres starts the run's server; with stats, it loads
// pg_stat_statements (-pg-stats), with explain > 0 auto_explain
// (-pg-explain), and it takes extra settings (-pg-setting).
func startPostgres(ctx context.Context, work string, stats bool, explain time.Duration, extra []string) (*postgres, error) {
	pg := &postgres{}
	if u := os.Getenv("DATABASE_URL"); u != "" {
		if len(extra) > 0 {
			return nil, errors.New("-pg-setting applies to the private server; DATABASE_URL's is configured where it runs")
		}
		if _, err := withDatabase(u, "postgres"); err != nil {
			return nil, fmt.Errorf("DATABASE_URL must be a postgres:// URL: %w", err)
		}
		pg.adminURL = u
	} else {
		// Fsync on, as `serve` runs it: the commit's flush is part of what
		// an acknowledged delivery costs.
		cfg := pgembed.Config{DataDir: filepath.Join(work, "pg"), Database: "postgres", Fsync: true}
		cfg.Settings = append(serverSettings(stats, explain), extra...)
		srv, err := pgembed.Start(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("start PostgreSQL: %w", err)
		}
		pg.server, pg.adminURL = srv, srv.URL()
	}
	dir, err := pgbenchDir()
	if err != nil {
		pg.close(ctx, func(string, ...any) {})
		return nil, err
	}
	pg.binDir = dir
	return pg, nil
}

// serverSettings are the private server's settings for -pg-stats and
// -pg-explain.
func serverSettings(stats bool, explain time.Duration) []string {
	var libs, settings []string
	if stats {
		libs = append(libs, "pg_stat_statements")
	}
	if explain > 0 {
		// How the generic plans were found that scanned river_job
		// whole (bench/README.md, Design decisions, "Completing a
		// processing batch"): every plan slower than explain, with
		// its actual row counts, buffers and WAL, in the server's
		// log.
		libs = append(libs, "auto_explain")
		settings = append(settings,
			fmt.Sprintf("auto_explain.log_min_duration=%dus", explain.Microseconds()),
			"auto_explain.log_analyze=on", "auto_explain.log_buffers=on", "auto_explain.log_wal=on")
	}
	if len(libs) > 0 {
		settings = append(settings, "shared_preload_libraries="+strings.Join(libs, ","))
	}
	return settings
}

// keepLog copies the private server's log to path.
func (pg *postgres) keepLog(path string) error {
	if pg.server == nil {
		return fmt.Errorf("-pg-explain: the server's log is only kept for the private server, not DATABASE_URL's")
	}
	log, err := os.ReadFile(pg.server.DataDir() + ".log")
	if err != nil {
		return err
	}
	return os.WriteFile(path, log, 0o644)
}

// pgbenchDir finds pgbench next to the server binaries, else on PATH.
func pgbenchDir() (string, error) {
	if dir, err := pgembed.FindBinDir(); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "pgbench")); err == nil {
			return dir, nil
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		return "", fmt.Errorf("pgbench not found next to the PostgreSQL binaries or on PATH (apt-get install postgresql-contrib or postgresql)")
	}
	return filepath.Dir(p), nil
}

// createDatabase creates a fresh database for one role of the run, applies
// hookinbox's migrations to it when migrate is set (the service applies
// its own through serve), and returns its URL.
func (pg *postgres) createDatabase(ctx context.Context, role string, migrate bool) (string, error) {
	name := databaseName(role)
	conn, err := pgx.Connect(ctx, pg.adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	pg.created = append(pg.created, name)
	u, err := withDatabase(pg.adminURL, name)
	if err != nil {
		return "", err
	}
	if migrate {
		pool, err := openPool(ctx, u)
		if err != nil {
			return "", err
		}
		defer pool.Close()
		if _, err := migrations.Up(ctx, pool, nil); err != nil {
			return "", fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	stats, err := pgx.Connect(ctx, u)
	if err != nil {
		return "", err
	}
	pg.statsMu.Lock()
	defer pg.statsMu.Unlock()
	if pg.statsConns == nil {
		pg.statsConns = map[string]*pgx.Conn{}
	}
	pg.statsConns[u] = stats
	return u, nil
}

// closeStats closes the statistics connections to the databases at urls,
// or to every database when there are none.
func (pg *postgres) closeStats(ctx context.Context, urls ...string) {
	pg.statsMu.Lock()
	defer pg.statsMu.Unlock()
	for u, conn := range pg.statsConns {
		if len(urls) == 0 || slices.Contains(urls, u) {
			conn.Close(ctx)
			delete(pg.statsConns, u)
		}
	}
}

func databaseName(role string) string {
	return fmt.Sprintf("hookinbox_bench_%s_%d", role, os.Getpid())
}

// dropDatabase drops a role's database once its phase is over, so that
// nothing of it (autovacuum after pgbench's updates, above all) runs in
// the phases after it.
func (pg *postgres) dropDatabase(ctx context.Context, role string) error {
	name := databaseName(role)
	if u, err := withDatabase(pg.adminURL, name); err == nil {
		pg.closeStats(ctx, u)
	}
	conn, err := pgx.Connect(ctx, pg.adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// close drops what the run created, or the whole private server.
func (pg *postgres) close(ctx context.Context, progress func(string, ...any)) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pg.closeStats(ctx)
	if pg.server != nil {
		if err := pg.server.Destroy(ctx); err != nil {
			progress("warning: removing the private PostgreSQL: %v", err)
		}
		return
	}
	conn, err := pgx.Connect(ctx, pg.adminURL)
	if err != nil {
		progress("warning: could not drop %v: %v", pg.created, err)
		return
	}
	defer conn.Close(ctx)
	for _, name := range pg.created {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			progress("warning: drop database %s: %v", name, err)
		}
	}
}

// checkpoint flushes the server's dirty buffers and WAL (it needs a
// superuser, which the embedded server's user is).
func (pg *postgres) checkpoint(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, pg.adminURL)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// freeConnections is how many more client connections the server takes:
// max_connections less the superuser reserve and those open now.
func (pg *postgres) freeConnections(ctx context.Context) (int, error) {
	conn, err := pgx.Connect(ctx, pg.adminURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var free int
	err = conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int
		- current_setting('superuser_reserved_connections')::int
		- (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int`).Scan(&free)
	return free, err
}

// autovacuumRuns is how many autovacuum and autoanalyze runs have finished
// on the tables of the databases at urls (pg_stat_user_tables), through
// their statistics connections; 0 for a database the run did not create or
// cannot read.
func (pg *postgres) autovacuumRuns(ctx context.Context, urls ...string) int64 {
	pg.statsMu.Lock()
	defer pg.statsMu.Unlock()
	var n int64
	for _, u := range urls {
		conn := pg.statsConns[u]
		if conn == nil {
			continue
		}
		var c int64
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)::bigint
			FROM pg_stat_user_tables`).Scan(&c); err == nil {
			n += c
		}
	}
	return n
}

// postmasterPID is 0 when the server is not ours.
func (pg *postgres) postmasterPID() int {
	if pg.server == nil {
		return 0
	}
	return postmasterPID(pg.server.DataDir())
}

func (pg *postgres) describe() databaseInfo {
	info := databaseInfo{Embedded: pg.server != nil}
	if conn, err := pgx.Connect(context.Background(), pg.adminURL); err == nil {
		defer conn.Close(context.Background())
		_ = conn.QueryRow(context.Background(), "SHOW server_version").Scan(&info.Version)
		_ = conn.QueryRow(context.Background(), "SHOW fsync").Scan(&info.Fsync)
		_ = conn.QueryRow(context.Background(), "SHOW synchronous_commit").Scan(&info.SynchronousCommit)
		_ = conn.QueryRow(context.Background(), "SHOW shared_buffers").Scan(&info.SharedBuffers)
		_ = conn.QueryRow(context.Background(), "SHOW max_wal_size").Scan(&info.MaxWALSize)
		_ = conn.QueryRow(context.Background(), "SHOW wal_init_zero").Scan(&info.WALInitZero)
	}
	return info
}

// withDatabase returns raw with its database replaced by name.
func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("scheme %q", u.Scheme)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func openPool(ctx context.Context, u string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// moduleRoot is the directory of hookinbox's go.mod, where `go build
// ./cmd/hookinbox` runs and results are written.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run from inside the hookinbox module (go run ./cmd/hookinbox-bench)")
	}
	return filepath.Dir(gomod), nil
}
