package jobs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/riverdb"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// River's reindexer is given only indexes the migrated schema has: the GIN
// indexes migration 014 drops are gone, and every other one it rebuilds
// exists.
func TestRiverReindexesOnlyIndexesThatExist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	exists := func(name string) bool {
		var ok bool
		require.NoError(t, pool.QueryRow(ctx,
			"SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE tablename = 'river_job' AND indexname = $1)", name).Scan(&ok))
		return ok
	}
	reindexed := jobs.ReindexedIndexes()
	require.NotEmpty(t, reindexed)
	for _, name := range reindexed {
		require.True(t, exists(name), "River reindexes %s, which the schema lacks", name)
	}
	for _, name := range riverdb.DroppedIndexes {
		require.False(t, exists(name), "migration 014 drops %s", name)
		require.NotContains(t, reindexed, name)
	}
}
