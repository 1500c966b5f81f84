package riverdb_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The drop's second look at a partition runs while ingest waits behind
// the inbox's lock, so it reads the unfinished work only: with a day of
// completed jobs and a month of handler steps kept, its plan (generic,
// as a prepared statement's becomes) scans neither table whole.
func TestPartitionBusyCheckReadsOnlyUnfinishedWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	busySQL, err := os.ReadFile("sql/partition_busy.sql")
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO river_job (args, kind, max_attempts, priority, queue, state, finalized_at)
		 SELECT '{}', 'fulfill', 25, 1, 'default', 'completed', now() FROM generate_series(1, 20000)`,
		`INSERT INTO river_job (args, kind, max_attempts, priority, queue, state, finalized_at)
		 SELECT jsonb_build_object('inbox_id', g), 'process_delivery', 25, 1, 'deliveries', 'completed', now()
		 FROM generate_series(1, 20000) g`,
		`INSERT INTO handler_step (key, source, delivery_id, handler, step, job_id)
		 SELECT 'k' || id, 'stripe', 'evt_' || id, 'saga', 'fulfill', id FROM river_job WHERE kind = 'fulfill'`,
		`INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
		 SELECT 'stripe', 'evt_' || g, g, '\x00', 'webhook' FROM generate_series(1, 20000) g`,
		"ANALYZE",
	} {
		_, err := pool.Exec(ctx, q)
		require.NoError(t, err)
	}

	plan := testdb.GenericPlan(t, pool, string(busySQL), pgx.NamedArgs{"lo": 1, "hi": 10000})
	require.NotContains(t, plan, "Seq Scan on river_job", plan)
	require.NotContains(t, plan, "Seq Scan on handler_step", plan)
	require.Contains(t, plan, "handler_step_job_idx", plan)
}

// River's job states are the eight partition_busy.sql knows: five
// unfinished, named there so that the planner can use its counts, and
// the three finished. A River that adds a state fails here, before a
// partition whose job is in that state could be dropped.
func TestRiverJobStatesAreKnown(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	var states []string
	require.NoError(t, pool.QueryRow(context.Background(),
		"SELECT array_agg(s::text ORDER BY s::text) FROM unnest(enum_range(NULL::river_job_state)) s").Scan(&states))
	require.Equal(t, []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"}, states)
}
