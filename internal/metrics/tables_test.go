package metrics

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

var inboxSize = regexp.MustCompile(`hookinbox_table_size_bytes\{table="inbox"\} (\S+)\n`)

// inboxBytes scrapes the inbox's size gauge.
func inboxBytes(t *testing.T, pool *pgxpool.Pool) float64 {
	t.Helper()
	m := inboxSize.FindStringSubmatch(scrape(t, New(pool, nil)))
	require.NotNil(t, m)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// The inbox's size is its partitions' and its key and state tables': the
// partitioned table itself has no storage, and its own size read 0 however
// many deliveries it held.
func TestTableSizeCountsTheInboxPartitions(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	bytes := func() float64 { return inboxBytes(t, pool) }
	empty := bytes()
	insertRows(t, pool, "processed", 2000)
	require.Greater(t, bytes(), empty+100_000, "2000 deliveries, with their keys and outcomes")
}

// The backlog's table counts too: inbox_pending is not partitioned, and
// a partition tree read alone has no row for it. It is the table that
// grows while handlers fail, each waiting delivery keeping its last error.
func TestTableSizeCountsTheBacklog(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	bytes := func() float64 { return inboxBytes(t, pool) }
	insertRows(t, pool, "received", 1000)
	before := bytes()
	// md5s do not compress: each row's error takes about 2 kB in TOAST.
	_, err := pool.Exec(context.Background(), `UPDATE inbox_pending
		SET last_error = (SELECT string_agg(md5(random()::text || g), '') FROM generate_series(1, 64) g WHERE inbox_id > 0)`)
	require.NoError(t, err)
	require.Greater(t, bytes(), before+1_000_000, "1000 waiting deliveries with a 2 kB error each")
}
