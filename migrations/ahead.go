package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The slow parts of migrations, done ahead while the service runs: indexes
// built CONCURRENTLY, and the copy of the inbox's keys (026). Each
// migration then finds its work done and holds its tables' writes only
// for the rest.
//
//go:embed ahead/*.sql
var aheadFiles embed.FS

// aheadStep is one thing Prepare does for a pending migration.
type aheadStep struct {
	version int
	name    string
	run     func(ctx context.Context, conn *pgx.Conn, logger *slog.Logger) error
}

var aheadSteps = []aheadStep{
	aheadIndex(11, "011_inbox_event_type_idx.sql"),
	aheadIndex(18, "018_process_deliveries_idx.sql"),
	aheadTx(20, "020_inbox_body_key_column.sql"),
	aheadIndex(20, "020_inbox_body_key_idx.sql"),
	aheadIndex(25, "025_destination_send_due_order_idx.sql"),
	{version: 26, name: "inbox_key", run: aheadMigrationHead(26)},
	aheadTx(26, "026_inbox_key_follow.sql"),
	{version: 26, name: "inbox_key copy", run: copyInboxKeys},
	aheadIndex(27, "027_handler_step_job_idx.sql"),
	aheadTx(31, "031_destination_send_in_line_column.sql"),
	aheadIndex(31, "031_destination_send_in_line_idx.sql"),
	{version: 32, name: "inbox_key_below", run: aheadMigrationHead(32)},
	aheadTx(32, "032_inbox_key_below_validate.sql"),
}

// PrepareResult says what Prepare did.
type PrepareResult struct {
	// Versions are the pending migrations Prepare did work ahead for.
	Versions []int
}

// Prepare does ahead, without holding any table's writes for long, the
// parts of hookinbox's pending migrations that would otherwise hold them
// while they run: Up then finds that work done. It runs while older
// replicas go on serving, can be run again (a step finds its work done,
// the copy of the keys skips those already there), and takes the
// migrators' lock, so no migration runs meanwhile.
// On an up-to-date or empty database it does nothing.
func Prepare(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (PrepareResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var res PrepareResult
	conn, err := lockedConn(ctx, pool)
	if err != nil {
		return res, fmt.Errorf("prepare: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// A step waits this long for a table's lock, then fails rather than
	// queue ingest behind it; running Prepare again retries.
	if _, err := conn.Exec(ctx, "SET lock_timeout = '10s'"); err != nil {
		return res, fmt.Errorf("prepare: %w", err)
	}
	applied, err := appliedVersions(ctx, conn, "hookinbox_migration")
	if err != nil || len(applied) == 0 {
		return res, err // a new database: its migrations build empty tables
	}
	for _, s := range aheadSteps {
		if applied[s.version] {
			continue
		}
		logger.Info("preparing migration", "version", s.version, "step", s.name)
		if err := s.run(ctx, conn, logger); err != nil {
			return res, fmt.Errorf("prepare: migration %03d, %s: %w", s.version, s.name, err)
		}
		if n := len(res.Versions); n == 0 || res.Versions[n-1] != s.version {
			res.Versions = append(res.Versions, s.version)
		}
	}
	return res, nil
}

func aheadSQL(file string) string {
	b, err := aheadFiles.ReadFile("ahead/" + file)
	if err != nil {
		panic(err) // embedded: a missing file is a build mistake
	}
	return string(b)
}

// aheadTx runs a file in one transaction.
func aheadTx(version int, file string) aheadStep {
	return aheadStep{version: version, name: file, run: func(ctx context.Context, conn *pgx.Conn, _ *slog.Logger) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, aheadSQL(file))
			return err
		})
	}}
}

var concurrentIndexName = regexp.MustCompile(`(?i)INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+(\w+)`)

// aheadIndex builds an index with CREATE INDEX CONCURRENTLY, which runs
// outside a transaction. A build that failed or was cancelled leaves an
// invalid index of that name behind, which IF NOT EXISTS (here and in the
// migration) would take for the index: it is dropped and built again.
func aheadIndex(version int, file string) aheadStep {
	sql := aheadSQL(file)
	m := concurrentIndexName.FindStringSubmatch(sql)
	if m == nil {
		panic("migrations: " + file + " builds no index CONCURRENTLY IF NOT EXISTS")
	}
	name := m[1]
	return aheadStep{version: version, name: name, run: func(ctx context.Context, conn *pgx.Conn, _ *slog.Logger) error {
		var invalid bool
		err := conn.QueryRow(ctx, "SELECT NOT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)", name).Scan(&invalid)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if invalid {
			if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY "+pgx.Identifier{name}.Sanitize()); err != nil {
				return err
			}
		}
		_, err = conn.Exec(ctx, sql)
		return err
	}}
}

// aheadMarker ends the part of a migration that Prepare may run ahead:
// statements above it are written to find their work done.
const aheadMarker = "-- ahead: end\n"

// aheadMigrationHead runs the part of a migration above its marker.
func aheadMigrationHead(version int) func(context.Context, *pgx.Conn, *slog.Logger) error {
	return func(ctx context.Context, conn *pgx.Conn, _ *slog.Logger) error {
		all, err := All()
		if err != nil {
			return err
		}
		for _, m := range all {
			if m.Version != version {
				continue
			}
			head, _, ok := strings.Cut(m.SQL, aheadMarker)
			if !ok {
				return fmt.Errorf("%s has no %q line", m.File, strings.TrimSpace(aheadMarker))
			}
			return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, head)
				return err
			})
		}
		return fmt.Errorf("no migration %03d", version)
	}
}
