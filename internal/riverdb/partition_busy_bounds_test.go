package riverdb_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/riverdb"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// The drop's second look counts a partition's first id and not its end:
// a delivery a replay failed, its job finished, keeps the partition that
// starts at its id, and not the one that ends there.
func TestPartitionBusySeesAFailedDeliveryAtItsFirstID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	rec, err := ingest.NewInbox(pool, rc).Record(ctx, ingest.Delivery{Source: "github", DeliveryID: "gh-1", EventType: "push",
		Headers: http.Header{"Content-Type": {"application/json"}}, Payload: []byte(`{}`)})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE kind = 'process_delivery'`)
	require.NoError(t, err)
	busy := func(lo, hi int64) bool {
		t.Helper()
		b, err := riverdb.PartitionBusy(ctx, pool, lo, hi)
		require.NoError(t, err)
		return b
	}
	id := rec.ID

	testdb.SetStatus(t, pool, "processed", id)
	require.False(t, busy(id, id+1), "a processed delivery with nothing unfinished")
	testdb.SetStatus(t, pool, "failed", id)
	require.True(t, busy(id, id+1), "a failed delivery at the partition's first id")
	require.False(t, busy(id-1, id), "the partition that ends at its id")
	require.False(t, busy(id+1, id+2))
}
