package riverdb_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// namesRiver matches River's tables and the names of its private
// statements.
var namesRiver = regexp.MustCompile(`\briver_(job|queue|leader|client|migration)|-- name: (JobInsertFastMany|PGNotifyMany)`)

// outside are the files, besides riverdb's own, that name River's tables:
// the migrations (the schema's history), and the statements doc.go lists
// as still elsewhere. Tests and the benchmark's command are not counted.
var outside = []string{
	"handlers/handlertest/wait.go",
	"internal/metrics/sql/tables.sql",
	"jobs/process_deliveries.go",
	"jobs/sql/bulk_replay_get.sql",
	"jobs/sql/partition_busy.sql",
	"jobs/sql/processing_complete.sql",
	"jobs/sql/processing_stalled.sql",
	"jobs/sql/retention_inbox.sql",
	"jobs/sql/retention_inbox_held.sql",
	"jobs/sql/retention_related.sql",
	"migrations/004_admin.up.sql",
	"migrations/013_destination_sender.up.sql",
	"migrations/014_river_job_without_gin.up.sql",
	"migrations/017_river_job_no_json_statistics.up.sql",
	"migrations/018_process_deliveries.up.sql",
	"migrations/ahead/018_process_deliveries_idx.sql",
}

// No other file names River's tables or statements: a new one belongs in
// riverdb, or in doc.go's list and outside.
func TestNothingElseNamesRiversTables(t *testing.T) {
	t.Parallel()
	root := "../.."
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "internal/riverdb" || rel == "cmd/hookinbox-bench" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, "_test.go") || !(strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".sql")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if namesRiver.Match(b) {
			found = append(found, rel)
		}
		return nil
	})
	require.NoError(t, err)
	for _, f := range found {
		require.True(t, slices.Contains(outside, f),
			"%s names River's tables or statements: move the statement into internal/riverdb, or list the file in its doc.go and in outside", f)
	}
	for _, f := range outside {
		require.True(t, slices.Contains(found, f), "%s no longer names River's tables: take it off outside and doc.go", f)
	}
}
