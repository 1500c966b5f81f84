package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// insertRows adds n inbox rows with status.
func insertRows(t *testing.T, pool *pgxpool.Pool, status string, n int) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		INSERT INTO inbox (id, source, delivery_id, event_type, payload, payload_sha256)
		SELECT nextval('inbox_id_seq'), 'github', $1 || i, 'push', '{}', '\x00' FROM generate_series(1, $2) i
		RETURNING id`, status, n)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	testdb.SetStatus(t, pool, status, ids...)
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	require.Equal(t, http.StatusOK, rec.Code, "%s", body)
	return string(body)
}

// Every status is reported, 0 included, and a small inbox is counted
// exactly: processed once read 0 with 8 processed rows (the planner had
// no statistics yet), and received and failed were absent.
func TestInboxRowsReportsEveryStatusExactly(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	insertRows(t, pool, "processed", 8)
	insertRows(t, pool, "skipped", 2)
	text := scrape(t, New(pool, nil))
	for status, n := range map[string]int{"processed": 8, "received": 0, "failed": 0, "skipped": 2} {
		require.Contains(t, text, fmt.Sprintf("hookinbox_inbox_rows{status=%q} %d\n", status, n))
		require.Contains(t, text, fmt.Sprintf("hookinbox_inbox_rows_estimated{status=%q} 0\n", status))
	}
}

// Past the exact limit, processed is the planner's estimate, never below
// the limit, and says so.
func TestInboxRowsEstimatesALargeProcessedCount(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	insertRows(t, pool, "processed", 30)
	insertRows(t, pool, "failed", 3)
	_, err := pool.Exec(context.Background(), "ANALYZE inbox_outcome")
	require.NoError(t, err)
	m := newMetrics(pool, nil, 10)
	text := scrape(t, m)
	require.Contains(t, text, "hookinbox_inbox_rows{status=\"processed\"} 30\n", "ANALYZE counted 33 rows; 3 are failed")
	require.Contains(t, text, "hookinbox_inbox_rows_estimated{status=\"processed\"} 1\n")
	require.Contains(t, text, "hookinbox_inbox_rows{status=\"failed\"} 3\n")
	require.Contains(t, text, "hookinbox_inbox_rows_estimated{status=\"failed\"} 0\n")
}
