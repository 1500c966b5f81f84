package metrics

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The inbox's size is its partitions' and its key and state tables': the
// partitioned table itself has no storage, and its own size read 0 however
// many deliveries it held.
func TestTableSizeCountsTheInboxPartitions(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	size := regexp.MustCompile(`hookinbox_table_size_bytes\{table="inbox"\} (\S+)\n`)
	bytes := func() float64 {
		m := size.FindStringSubmatch(scrape(t, New(pool, nil)))
		require.NotNil(t, m)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	empty := bytes()
	insertRows(t, pool, "processed", 2000)
	require.Greater(t, bytes(), empty+100_000, "2000 deliveries, with their keys and outcomes")
}
