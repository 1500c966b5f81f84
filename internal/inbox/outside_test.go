package inbox_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/sqlowner"
)

// namesInbox matches SQL that names one of the inbox's tables, its view,
// its sequence, its partitions or its functions: a table after a keyword
// that takes one, a table quoted as a relation's name ('inbox'::regclass,
// pg_total_relation_size('inbox'), but not a label such as the metrics'
// 'inbox'), and the names nothing but SQL uses. It is matched against
// code with its comments taken out, where "from inbox" is prose.
var namesInbox = regexp.MustCompile(`(?i)` +
	`\b(from|join|into|update|table|using)\s+(inbox|inbox_key|inbox_key_generation|inbox_pending|inbox_outcome|inbox_overflow|inbox_outcome_overflow|delivery_conflict|delivery)\b` +
	`|(\(\s*|\[\s*)'(inbox|inbox_key|inbox_key_generation|inbox_pending|inbox_outcome|inbox_overflow|inbox_outcome_overflow|delivery_conflict|delivery)'` +
	`|'(inbox|inbox_key|inbox_key_generation|inbox_pending|inbox_outcome|inbox_overflow|inbox_outcome_overflow|delivery_conflict|delivery)'\s*::\s*regclass` +
	`|\binbox_(id_seq|partition_create|partition_statistics|partition_vacuum|key_generation_create|p\d+|outcome_p\d+|key_g\d+)\b`)

// outside are the files, besides internal/inbox's own, whose SQL names
// the inbox's tables, each with why it is there; the package comment
// lists them too. The migrations (the schema's history), tests and their
// testdata, and the benchmark's and the mutation table's commands are not
// counted.
var outside = map[string]string{
	// One statement over the inbox's tables and River's, which would be
	// two statements (and two snapshots and round trips) apart, and which
	// writes (or, for a write's rule, reads) the inbox's rows in ways no
	// view of this package publishes.
	"internal/riverdb/sql/processing_complete.sql":  "stays: marks outcomes and completes River's jobs in one statement; riverdb owns River's tables",
	"internal/riverdb/sql/partition_busy.sql":       "stays: whether a partition's deliveries have unfinished jobs, steps or sends; riverdb owns River's tables",
	"internal/riverdb/sql/retention_inbox.sql":      "stays: retention's batched delete, keeping deliveries with unfinished jobs; riverdb owns River's tables",
	"internal/riverdb/sql/retention_inbox_held.sql": "stays: counts what retention_inbox.sql keeps; riverdb owns River's tables",
	"internal/riverdb/sql/orphan_sweep_find.sql":    "stays: joins river_job with inbox_pending; riverdb owns River's tables",
	"internal/riverdb/sql/replay_get.sql":           "stays: joins river_job with the inbox; riverdb owns River's tables",

	// No statement of the service's.
	"internal/testdb/testdb.go": "stays: SetStatus, a fixture that puts deliveries in a state for tests; in internal/inbox it would be a test-only writer in the service's code",
}

// No other file's SQL names the inbox's tables: a new statement belongs in
// internal/inbox, or in outside with its reason and in the package
// comment's list.
func TestNothingElseNamesTheInboxTables(t *testing.T) {
	t.Parallel()
	found, err := sqlowner.Find("../..", func(rel string, code []byte) bool {
		return namesInbox.MatchString(withoutComments(string(code), strings.HasSuffix(rel, ".sql")))
	}, "internal/inbox", "migrations", "cmd/hookinbox-bench", "docs",
		// The mutation table quotes other files' statements to change
		// them; it runs none of its own.
		"cmd/hookinbox-mutate")
	require.NoError(t, err)
	sqlowner.RequireExactly(t, found, slices.Collect(maps.Keys(outside)), "the inbox's tables", "internal/inbox")
}

// withoutComments drops a file's line comments: "--" to the end of the
// line in SQL, lines that start with "//" in Go.
func withoutComments(code string, sql bool) string {
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		if sql {
			lines[i], _, _ = strings.Cut(l, "--")
		} else if strings.HasPrefix(strings.TrimSpace(l), "//") {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// The pattern tells SQL from prose in the shapes this tree has.
func TestNamesInbox(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"SELECT 1 FROM inbox WHERE id = $1",
		"LEFT JOIN inbox_key k ON k.source = c.source",
		"INSERT INTO inbox_pending (inbox_id) VALUES (1)",
		"UPDATE inbox_outcome SET status = 'failed'",
		"DELETE FROM delivery_conflict WHERE id = 1",
		"SELECT status FROM delivery\nWHERE id = 1",
		"LOCK TABLE inbox, inbox_outcome IN ACCESS EXCLUSIVE MODE",
		"WHERE h.inhparent = 'inbox'::regclass",
		"SELECT pg_total_relation_size('inbox')",
		"FROM unnest(ARRAY['inbox', 'inbox_key']::regclass[])",
		"SELECT nextval('inbox_id_seq')",
		"SELECT inbox_partition_create($1, $2)",
		"DROP TABLE inbox_key_g1099511627776",
	} {
		require.True(t, namesInbox.MatchString(s), s)
	}
	for _, s := range []string{
		"SELECT inbox_id, delivery_id FROM destination_send",
		"WHERE (j.args->>'inbox_id')::bigint = i.id",
		"a delivery removed from the inbox",
		"deliveries_list.sql",
		"SELECT 'inbox', s.bytes::float8 FROM delivery_storage s",
		"JOIN delivery_request i ON i.id = s.inbox_id",
	} {
		require.False(t, namesInbox.MatchString(s), s)
	}
}
