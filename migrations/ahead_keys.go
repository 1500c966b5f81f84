package migrations

import (
	"context"
	_ "embed"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// keysComplete marks an inbox_key that holds every delivery's key, for
// migration 026 to skip its copy.
const keysComplete = "hookinbox: every key of the inbox"

// keysWindow is how many ids of the inbox one transaction of the copy
// reads: a few MB of rows, well under a second.
const keysWindow = 10_000

var (
	//go:embed ahead/026_inbox_key_copy.sql
	inboxKeyCopySQL string
	//go:embed ahead/026_inbox_key_tombstones.sql
	inboxKeyTombstonesSQL string
)

// copyInboxKeys copies the keys of the deliveries stored before the
// triggers of 026_inbox_key_follow.sql were in place, a window of ids per
// transaction; the triggers keep the rest. Every id the inbox had when the
// triggers began is below hi: a row inserted before them had committed by
// then (CREATE TRIGGER waits for every insert under way).
func copyInboxKeys(ctx context.Context, conn *pgx.Conn, logger *slog.Logger) error {
	var comment *string
	if err := conn.QueryRow(ctx, "SELECT obj_description('inbox_key'::regclass, 'pg_class')").Scan(&comment); err != nil {
		return err
	}
	if comment != nil && *comment == keysComplete {
		return nil
	}
	var lo, hi int64
	if err := conn.QueryRow(ctx, "SELECT coalesce(min(id), 0), coalesce(max(id) + 1, 0) FROM inbox").Scan(&lo, &hi); err != nil {
		return err
	}
	var copied int64
	last := time.Now()
	for from := lo; from < hi; from += keysWindow {
		tag, err := conn.Exec(ctx, inboxKeyCopySQL, pgx.NamedArgs{"from": from, "to": from + keysWindow})
		if err != nil {
			return err
		}
		copied += tag.RowsAffected()
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			logger.Info("copying inbox keys", "copied", copied, "done_percent", 100*(from+keysWindow-lo)/(hi-lo))
		}
	}
	logger.Info("inbox keys copied", "copied", copied)
	// Marked first: a delete that reads the mark no longer leaves a
	// tombstone, so few are made after the ones deleted here.
	if _, err := conn.Exec(ctx, "COMMENT ON TABLE inbox_key IS '"+keysComplete+"'"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, inboxKeyTombstonesSQL); err != nil {
		return err
	}
	// The migration deletes the rest through the BRIN index, which the
	// planner picks once it knows how few ids are negative.
	_, err := conn.Exec(ctx, "ANALYZE inbox_key")
	return err
}
