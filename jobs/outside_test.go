package jobs_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/sqlowner"
)

// namesGeneration matches the generation's tables.
var namesGeneration = regexp.MustCompile(`\bworker_(config|process)\b`)

// No file outside this package names the generation's tables: their
// statements are the generation's (jobs/sql/worker_*.sql). The
// migrations (the schema's history), the docs, the benchmark's command and
// the mutation table, which quotes other files' statements to change
// them, are not counted.
func TestNothingElseNamesTheGenerationTables(t *testing.T) {
	t.Parallel()
	found, err := sqlowner.Find("..", func(_ string, code []byte) bool { return namesGeneration.Match(code) },
		"jobs", "migrations", "docs", "cmd/hookinbox-bench", "cmd/hookinbox-mutate")
	require.NoError(t, err)
	sqlowner.RequireExactly(t, found, nil, "the generation's tables", "jobs")
}
