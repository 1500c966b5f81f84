// Package testdb gives tests a real PostgreSQL: one server per test binary,
// started from the machine's binaries (or TEST_DATABASE_URL), and a fresh,
// migrated database per test, cloned from a template so it costs one
// CREATE DATABASE instead of a migration run.
package testdb

import (
	"context"
	"fmt"
	"log"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/pgembed"
	"github.com/hookinbox/hookinbox/migrations"
)

// EnvURL names an existing server to use instead of starting one. Its user
// needs CREATEDB; every database testdb creates there is dropped afterwards.
const EnvURL = "TEST_DATABASE_URL"

var (
	adminURL string // a URL whose user may create databases
	template string // migrated database each test clones
	counter  atomic.Int64
)

// Main runs m with a PostgreSQL server for the whole test binary. Call it
// from TestMain: func TestMain(m *testing.M) { testdb.Main(m) }.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit, for a TestMain with cleanup of its own.
func Run(m *testing.M) int { return run(m) }

func run(m *testing.M) int {
	ctx := context.Background()
	adminURL = os.Getenv(EnvURL)
	if adminURL == "" {
		dir, err := os.MkdirTemp("", "hookinbox-testpg-")
		if err != nil {
			log.Printf("testdb: %v", err)
			return 1
		}
		defer os.RemoveAll(dir)
		// MkdirTemp makes 0700 dirs; the postgres user must reach the cluster
		// when tests run as root.
		if err := os.Chmod(dir, 0o755); err != nil {
			log.Printf("testdb: %v", err)
			return 1
		}
		srv, err := pgembed.Start(ctx, pgembed.Config{DataDir: dir + "/pg", Database: "postgres"})
		if err != nil {
			log.Printf("testdb: start PostgreSQL: %v", err)
			return 1
		}
		defer srv.Destroy(context.Background())
		adminURL = srv.URL()
	}

	template = fmt.Sprintf("hookinbox_tmpl_%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	if err := createTemplate(ctx); err != nil {
		log.Printf("testdb: %v", err)
		return 1
	}
	defer dropDatabase(context.Background(), template)
	return m.Run()
}

func createTemplate(ctx context.Context) error {
	if err := adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{template}.Sanitize()); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	pool, err := pgxpool.New(ctx, withDatabase(adminURL, template))
	if err != nil {
		return err
	}
	// The pool must be closed before anything clones the template:
	// PostgreSQL refuses to copy a database that has open connections.
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool, nil); err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	return nil
}

// URL creates a fresh migrated database for t, dropped when t ends, and
// returns its URL (for code that opens its own pool or a child process).
func URL(t testing.TB) string {
	t.Helper()
	if template == "" {
		t.Fatal("testdb: call testdb.Main from TestMain")
	}
	name := fmt.Sprintf("hookinbox_test_%d_%d", os.Getpid(), counter.Add(1))
	ctx := context.Background()
	if err := adminExec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s",
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{template}.Sanitize())); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() { dropDatabase(context.Background(), name) })
	return withDatabase(adminURL, name)
}

// New is URL plus a pool on it, closed when t ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return NewWithMaxConns(t, 0)
}

// NewWithMaxConns is New with a pool of at most maxConns connections;
// zero is pgx's default, max(4, CPUs).
func NewWithMaxConns(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL(t))
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// Cleanups run last-in first-out: the pool closes before the drop.
	t.Cleanup(pool.Close)
	return pool
}

// AdminURL is the server's URL for tests that need another database
// (e.g. an empty one to migrate).
func AdminURL() string { return adminURL }

func adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func dropDatabase(ctx context.Context, name string) {
	// FORCE ends sessions a test left open (a killed child process).
	if err := adminExec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		log.Printf("testdb: drop %s: %v", name, err)
	}
}

func withDatabase(rawURL, db string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(fmt.Sprintf("testdb: bad URL: %v", err))
	}
	u.Path = "/" + db
	return u.String()
}

// SetStatus puts deliveries in status as processing would leave them, for
// tests that need a state without running handlers: received is a row of
// inbox_pending, any other status a row of inbox_outcome (processed_at is
// set for processed and skipped). Whatever state the deliveries had is
// replaced. More of an outcome (last_error, resource_key, stale) is set on
// inbox_outcome directly.
func SetStatus(t testing.TB, pool *pgxpool.Pool, status string, ids ...int64) {
	t.Helper()
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		ctx := context.Background()
		if _, err := tx.Exec(ctx, "DELETE FROM inbox_pending WHERE inbox_id = ANY($1)", ids); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM inbox_outcome WHERE inbox_id = ANY($1)", ids); err != nil {
			return err
		}
		if status == "received" {
			_, err := tx.Exec(ctx, `INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
				SELECT id, source, event_type, received_at FROM inbox WHERE id = ANY($1)`, ids)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
			SELECT id, source, event_type, received_at, $2, CASE WHEN $2 IN ('processed', 'skipped') THEN now() END
			FROM inbox WHERE id = ANY($1)`, ids, status)
		return err
	})
	if err != nil {
		t.Fatalf("testdb: set deliveries %v to %s: %v", ids, status, err)
	}
}

// WaitLockWaiters waits until n sessions on pool's database wait for a
// lock (a statement queued behind another transaction's row or advisory
// lock), and fails the test with why after 10 s.
func WaitLockWaiters(t testing.TB, pool *pgxpool.Pool, n int, why string) {
	t.Helper()
	var got int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&got); err != nil {
			t.Fatalf("testdb: read lock waiters: %v", err)
		}
		if got == n {
			return
		}
	}
	t.Fatalf("testdb: %d sessions wait for a lock, want %d: %s", got, n, why)
}

// GenericPlan returns the plan PostgreSQL makes for query with args as a
// prepared statement's generic plan, the one a cached statement keeps
// once the table has grown: a plan test reads it for scans of a whole
// table.
func GenericPlan(t testing.TB, pool *pgxpool.Pool, query string, args pgx.NamedArgs) string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+query, args)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("testdb: explain: %v", err)
	}
	return strings.Join(lines, "\n")
}
