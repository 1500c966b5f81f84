package destination

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A claim reads its sends' bodies through the view internal/inbox
// publishes (delivery_request), which the planner expands: each claimed
// send's delivery is one look-up of the inbox's primary key, as when the
// claim joined the table, never a scan of a view's result.
func TestClaimReadsBodiesThroughTheViewByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	_, err := pool.Exec(ctx, `
		INSERT INTO inbox (id, source, delivery_id, event_type, headers, payload, payload_sha256)
		SELECT nextval('inbox_id_seq'), 'github', 'd' || g, 'issues', '{"Content-Type": ["application/json"]}', '{}', '\x00'
		FROM generate_series(1, 2000) g;
		INSERT INTO destination_slot (destination, slot) SELECT 'orders', n FROM generate_series(0, 7) n;
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              event_at, event_received_at, at_is_receipt, state, next_attempt_at)
		SELECT 'orders', i.source, i.delivery_id, i.id, 'issues', 'k' || i.id, false, false, now(), now(), false, 'pending', now()
		FROM inbox i;
		ANALYZE`)
	require.NoError(t, err)

	var plan []string
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "+sendClaimSQL, pgx.NamedArgs{
			"destination": "orders", "slots": 8, "limit": 8, "holder": "test/1", "ttl": "30 seconds", "with_input": true})
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	text := strings.Join(plan, "\n")
	require.NotContains(t, text, "Subquery Scan", text)
	require.Regexp(t, `Index Scan using inbox_p\d+_pkey on inbox_p\d+ i_\d+ \(actual rows=1 loops=8\)`, text)
}
