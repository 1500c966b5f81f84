// Package migrations holds hookinbox's schema and applies it, together with
// River's own migrations, from SQL embedded in the binary.
//
// It is part of hookinbox's engine, not a stable API: a library user
// applies the schema with "hookinbox migrate" or hookinbox.Run, and adds
// tables with hookinbox.WithMigrations.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed *.up.sql
var files embed.FS

// advisoryLockKey serialises migrators: several replicas starting at once must
// not apply the same migration twice. Any constant works as long as it is ours.
const advisoryLockKey int64 = 0x686f6f6b696e62 // "hookinb"

// Migration is one of the app's own schema steps.
type Migration struct {
	Version int
	Name    string
	File    string // e.g. 003_inbox_origin.up.sql
	SQL     string
}

// ErrInvalidFiles means the migration files built into this binary are
// wrong: a name without a version, or two files with one version. No retry
// can fix that; the files must be renamed and the binary rebuilt.
var ErrInvalidFiles = errors.New("invalid migration files")

// All returns the app's migrations in version order.
func All() ([]Migration, error) { return all(files) }

func all(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.up.sql")
	if err != nil {
		return nil, err
	}
	var all []Migration
	for _, name := range names {
		prefix, rest, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("%w: %s: the name must start with a positive version, e.g. 001_name.up.sql", ErrInvalidFiles, name)
		}
		sql, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		all = append(all, Migration{Version: version, Name: strings.TrimSuffix(rest, ".up.sql"), File: name, SQL: string(sql)})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Version < all[j].Version })
	for i := 1; i < len(all); i++ {
		if a, b := all[i-1], all[i]; a.Version == b.Version {
			return nil, fmt.Errorf("%w: %s and %s both have version %d; rename one of them to the next free version, %03d",
				ErrInvalidFiles, a.File, b.File, a.Version, all[len(all)-1].Version+1)
		}
	}
	return all, nil
}

// Options adds an application's own migrations to hookinbox's.
type Options struct {
	// App holds the application's NNN_name.up.sql files (a binary built
	// on hookinbox, hookinbox.WithMigrations): applied after hookinbox's,
	// under the same lock, and tracked apart from them in
	// hookinbox_app_migration, so their versions are a line of their own.
	// Nil: none.
	App fs.FS
}

// Result says what Up applied.
type Result struct {
	RiverVersions     []int // River's migrations applied by this call
	HookinboxVersions []int // hookinbox's
	AppVersions       []int // the application's (Options.App)
}

// line is one sequence of migrations and the table that records which of
// them are applied.
type line struct {
	name  string // for messages: "hookinbox" or "app"
	table string
	fsys  fs.FS
}

func lines(opts Options) []line {
	ls := []line{{name: "hookinbox", table: "hookinbox_migration", fsys: files}}
	if opts.App != nil {
		ls = append(ls, line{name: "app", table: "hookinbox_app_migration", fsys: opts.App})
	}
	return ls
}

// Validate checks every line's files (names, versions) without touching a
// database: a binary with a version clash stops at startup.
func Validate(opts Options) error {
	for _, l := range lines(opts) {
		if _, err := all(l.fsys); err != nil {
			if l.name == "app" {
				return fmt.Errorf("the application's migrations: %w", err)
			}
			return err
		}
	}
	return nil
}

// Up applies River's migrations, then hookinbox's, then the application's,
// under a session advisory lock so that concurrent callers apply each step
// once. It is a no-op on an up-to-date database.
func Up(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (Result, error) {
	return UpWith(ctx, pool, logger, Options{})
}

// UpWith is Up with the application's migrations.
func UpWith(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger, opts Options) (Result, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var res Result
	if err := Validate(opts); err != nil {
		return res, err
	}

	conn, err := lockedConn(ctx, pool)
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	// River's migrator runs each of its steps on the pool; our lock is held by
	// the session above, which is enough because every migrator takes it first.
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logger})
	if err != nil {
		return res, fmt.Errorf("migrate: river: %w", err)
	}
	riverRes, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return res, fmt.Errorf("migrate: river: %w", err)
	}
	for _, v := range riverRes.Versions {
		res.RiverVersions = append(res.RiverVersions, v.Version)
	}

	for _, l := range lines(opts) {
		done, err := upLine(ctx, conn, l)
		if l.name == "app" {
			res.AppVersions = done
		} else {
			res.HookinboxVersions = done
		}
		if err != nil {
			return res, err
		}
	}
	if len(res.RiverVersions)+len(res.HookinboxVersions)+len(res.AppVersions) > 0 {
		logger.Info("migrations applied", "river", res.RiverVersions, "hookinbox", res.HookinboxVersions, "app", res.AppVersions)
	}
	return res, nil
}

// lockedConn opens a session holding the migrators' advisory lock; closing
// it releases the lock. It is a connection of its own, outside the pool: a
// migrator waiting for the lock must not hold a pooled connection, or
// several waiters could starve the holder, whose River migrator runs on
// the pool.
func lockedConn(ctx context.Context, pool *pgxpool.Pool) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", advisoryLockKey); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("take lock: %w", err)
	}
	return conn, nil
}

// appliedVersions reads a line's applied versions; none if its table is
// not there yet.
func appliedVersions(ctx context.Context, conn *pgx.Conn, table string) (map[int]bool, error) {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil || !exists {
		return nil, err
	}
	rows, err := conn.Query(ctx, "SELECT version FROM "+pgx.Identifier{table}.Sanitize())
	if err != nil {
		return nil, fmt.Errorf("read applied versions: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("read applied versions: %w", err)
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

func upLine(ctx context.Context, conn *pgx.Conn, l line) ([]int, error) {
	all, err := all(l.fsys)
	if err != nil {
		return nil, err
	}
	table := pgx.Identifier{l.table}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: create %s: %w", l.table, err)
	}
	applied, err := appliedVersions(ctx, conn, l.table)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}

	var done []int
	for _, m := range all {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// Never queue behind a long-running query holding a table lock:
			// fail fast and let the operator retry instead of blocking ingest.
			if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '10s'"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+table+" (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("migrate: %s %03d_%s: %w", l.name, m.Version, m.Name, err)
		}
		done = append(done, m.Version)
	}
	return done, nil
}

// ErrNotMigrated means the database lacks migrations this binary expects;
// run `hookinbox migrate` (or serve without --migrate=false).
var ErrNotMigrated = errors.New("database schema is not migrated")

// Check reports ErrNotMigrated unless every migration, River's and
// hookinbox's, is applied. It changes nothing.
func Check(ctx context.Context, pool *pgxpool.Pool) error { return CheckWith(ctx, pool, Options{}) }

// CheckWith is Check with the application's migrations.
func CheckWith(ctx context.Context, pool *pgxpool.Pool, opts Options) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	res, err := migrator.Validate(ctx, nil)
	if err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("%w: river: %s", ErrNotMigrated, strings.Join(res.Messages, "; "))
	}
	for _, l := range lines(opts) {
		all, err := all(l.fsys)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			continue
		}
		var applied int
		err = pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{l.table}.Sanitize()).Scan(&applied)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return fmt.Errorf("%w: no %s migrations applied", ErrNotMigrated, l.name)
		}
		if err != nil {
			return err
		}
		if applied < len(all) {
			return fmt.Errorf("%w: %d of %d %s migrations applied", ErrNotMigrated, applied, len(all), l.name)
		}
	}
	return nil
}
