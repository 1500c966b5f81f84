package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Deliveries stored before 016 keep their state: a received one becomes a
// pending row (with its last error), every other status an outcome row,
// and the view delivery shows each as the inbox row did.
func TestInboxStateTablesBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 15)
	processedAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	_, err := pool.Exec(ctx, `
		INSERT INTO inbox (source, delivery_id, event_type, payload, payload_sha256, status, processed_at, last_error, resource_key, stale) VALUES
			('github', 'new',     'push',   '{}', '\x00', 'received',  NULL, NULL,   NULL,        NULL),
			('github', 'retry',   'push',   '{}', '\x00', 'received',  NULL, 'boom', NULL,        NULL),
			('github', 'done',    'issues', '{}', '\x00', 'processed', $1,   NULL,   'acme/app#1', true),
			('stripe', 'nothing', 'ping',   '{}', '\x00', 'skipped',   $1,   NULL,   NULL,        NULL),
			('stripe', 'gave-up', 'charge', '{}', '\x00', 'failed',    NULL, 'bad',  NULL,        NULL)`, processedAt)
	require.NoError(t, err)
	apply(16, 16)

	type state struct {
		Status      string
		ProcessedAt *time.Time
		LastError   *string
		ResourceKey *string
		Stale       *bool
	}
	rows, err := pool.Query(ctx, "SELECT delivery_id, status, processed_at, last_error, resource_key, stale FROM delivery")
	require.NoError(t, err)
	got := map[string]state{}
	for rows.Next() {
		var id string
		var s state
		require.NoError(t, rows.Scan(&id, &s.Status, &s.ProcessedAt, &s.LastError, &s.ResourceKey, &s.Stale))
		if s.ProcessedAt != nil {
			*s.ProcessedAt = s.ProcessedAt.UTC()
		}
		got[id] = s
	}
	require.NoError(t, rows.Err())
	boom, bad, key, yes := "boom", "bad", "acme/app#1", true
	require.Equal(t, map[string]state{
		"new":     {Status: "received"},
		"retry":   {Status: "received", LastError: &boom},
		"done":    {Status: "processed", ProcessedAt: &processedAt, ResourceKey: &key, Stale: &yes},
		"nothing": {Status: "skipped", ProcessedAt: &processedAt},
		"gave-up": {Status: "failed", LastError: &bad},
	}, got)

	var pending, outcomes int
	require.NoError(t, pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM inbox_pending), (SELECT count(*) FROM inbox_outcome)").
		Scan(&pending, &outcomes))
	require.Equal(t, 2, pending, "the received ones")
	require.Equal(t, 3, outcomes, "the decided ones")

	var copied int
	require.NoError(t, pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM inbox_pending s JOIN inbox i ON i.id = s.inbox_id
			 WHERE (s.source, s.event_type, s.received_at) = (i.source, i.event_type, i.received_at))
			+ (SELECT count(*) FROM inbox_outcome s JOIN inbox i ON i.id = s.inbox_id
			   WHERE (s.source, s.event_type, s.received_at) = (i.source, i.event_type, i.received_at))`).Scan(&copied))
	require.Equal(t, 5, copied, "each state row repeats its delivery's source, event type and receipt time")
}
