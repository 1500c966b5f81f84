package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Conflict rows stored before 033 are merged to one per source, delivery
// id and body: the oldest stays, with the copies counted and the last
// one's time; afterwards the key is unique.
func TestDeliveryConflictRowsMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 32)
	_, err := pool.Exec(ctx, `
		INSERT INTO delivery_conflict (source, delivery_id, received_at, payload_sha256, headers, body, body_size) VALUES
			('github', 'd1', '2025-01-01T00:00:00Z', sha256('a'), '{"n":["first"]}', 'a', 1),
			('github', 'd1', '2025-01-01T00:02:00Z', sha256('a'), '{}', 'a', 1),
			('github', 'd1', '2025-01-01T00:01:00Z', sha256('a'), '{}', 'a', 1),
			('github', 'd1', '2025-01-01T00:03:00Z', sha256('b'), '{}', 'b', 1),
			('shopify', 'd1', '2025-01-01T00:04:00Z', sha256('a'), '{}', 'a', 1)`)
	require.NoError(t, err)
	apply(33, 33)

	type row struct {
		source, body, headers string
		copies                int64
		last                  *time.Time
	}
	rows, err := pool.Query(ctx, `SELECT source, convert_from(body, 'UTF8'), headers::text, copies, last_received_at
		FROM delivery_conflict ORDER BY id`)
	require.NoError(t, err)
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.source, &r.body, &r.headers, &r.copies, &r.last))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	last := time.Date(2025, 1, 1, 0, 2, 0, 0, time.UTC)
	require.Len(t, got, 3)
	require.Equal(t, row{"github", "a", `{"n": ["first"]}`, 3, got[0].last}, got[0], "the oldest stays")
	require.NotNil(t, got[0].last)
	require.True(t, last.Equal(*got[0].last), "%v", got[0].last)
	require.Equal(t, row{"github", "b", "{}", 1, nil}, got[1])
	require.Equal(t, row{"shopify", "a", "{}", 1, nil}, got[2])

	_, err = pool.Exec(ctx, `INSERT INTO delivery_conflict (source, delivery_id, payload_sha256, headers, body, body_size)
		VALUES ('github', 'd1', sha256('b'), '{}', 'b', 1)`)
	require.ErrorContains(t, err, "delivery_conflict_once_idx")
}
