package riverdb_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/riverdb"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// riverJobColumns are the columns of river_job that hookinbox's SQL and
// migrations name (doc.go lists where).
var riverJobColumns = []string{"id", "kind", "args", "metadata", "tags", "queue", "state", "attempt",
	"max_attempts", "attempted_by", "errors", "created_at", "scheduled_at", "finalized_at"}

// riverJobStates are the values of river_job_state hookinbox's SQL names.
var riverJobStates = []string{"available", "pending", "running", "retryable", "scheduled",
	"completed", "cancelled", "discarded"}

// River's migrated schema has the columns and states hookinbox's SQL names,
// and the indexes its migrations add, not the ones they drop.
func TestRiverSchemaHasWhatHookinboxNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)

	rows, err := pool.Query(ctx, `SELECT column_name::text FROM information_schema.columns WHERE table_name = 'river_job'`)
	require.NoError(t, err)
	columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	for _, c := range riverJobColumns {
		require.Contains(t, columns, c, "river_job.%s", c)
	}

	rows, err = pool.Query(ctx, `SELECT unnest(enum_range(NULL::river_job_state))::text`)
	require.NoError(t, err)
	states, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.ElementsMatch(t, riverJobStates, states, "river_job_state's values")
	var riverStates []string
	for _, st := range rivertype.JobStates() {
		riverStates = append(riverStates, string(st))
	}
	require.ElementsMatch(t, riverJobStates, riverStates, "River's job states")

	indexExists := func(name string) bool {
		var ok bool
		require.NoError(t, pool.QueryRow(ctx,
			`SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE tablename = 'river_job' AND indexname = $1)`, name).Scan(&ok))
		return ok
	}
	for _, name := range riverdb.DroppedIndexes {
		require.Contains(t, river.ReindexerIndexNamesDefault(), name, "River's reindexer no longer names %s", name)
		require.False(t, indexExists(name), "migrations/014 drops %s", name)
	}
	for _, name := range []string{"river_job_process_delivery_inbox_idx", "river_job_process_deliveries_inbox_range_idx"} {
		require.True(t, indexExists(name), "hookinbox's migrations add %s", name)
	}
	// Any other index over args or metadata would be one migrations/014
	// and 017 did not weigh.
	rows, err = pool.Query(ctx, `SELECT indexname::text FROM pg_indexes
		WHERE tablename = 'river_job' AND (indexdef LIKE '%args%' OR indexdef LIKE '%metadata%')`)
	require.NoError(t, err)
	overJSON, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"river_job_process_delivery_inbox_idx", "river_job_process_deliveries_inbox_range_idx"}, overJSON,
		"river_job's indexes over args or metadata")
}

// Every statement riverdb runs is valid against the migrated schema:
// River's columns and types are what it names.
func TestStatementsPrepare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	files, err := filepath.Glob("sql/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		sql, _, err := pgx.NamedArgs{}.RewriteQuery(ctx, conn.Conn(), string(b), nil)
		require.NoError(t, err)
		_, err = conn.Conn().Prepare(ctx, "", sql)
		require.NoError(t, err, "%s does not prepare against River's schema", f)
	}
}

// River's attempt errors, which the SQL reads with ->>'error', are
// AttemptError as JSON.
func TestAttemptErrorHasAnErrorKey(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(rivertype.AttemptError{Error: "boom"})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Equal(t, "boom", m["error"])
}

type snoozeArgs struct{}

func (snoozeArgs) Kind() string { return "riverdb_snooze" }

type snoozeWorker struct {
	river.WorkerDefaults[snoozeArgs]
}

func (snoozeWorker) Work(context.Context, *river.Job[snoozeArgs]) error {
	return river.JobSnooze(time.Minute)
}

// Snoozes reads the count River keeps of a job's snoozes.
func TestSnoozesCountsRiversSnoozes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	w := rivertest.NewWorker(t, riverpgxv5.New(pool), &river.Config{}, river.Worker[snoozeArgs](snoozeWorker{}))
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	res, err := w.Work(ctx, t, tx, snoozeArgs{}, nil)
	require.NoError(t, err)
	require.Equal(t, river.EventKindJobSnoozed, res.EventKind)
	require.Equal(t, 1, riverdb.Snoozes(res.Job), "metadata %s", res.Job.Metadata)
}
