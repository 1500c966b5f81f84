package riverdb_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/sqlowner"
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
	found, err := sqlowner.Find("../..", func(_ string, code []byte) bool { return namesRiver.Match(code) },
		"internal/riverdb", "cmd/hookinbox-bench")
	require.NoError(t, err)
	sqlowner.RequireExactly(t, found, outside, "River's tables or statements", "internal/riverdb")
}
