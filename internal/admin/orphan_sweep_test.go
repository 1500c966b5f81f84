package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/jobs"
)

// A delivery whose job was deleted: the API lists the job the orphan sweep
// gave it, tagged, and the console says who enqueued it.
func TestDeliveryShowsTheOrphanSweepsJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "orphaned", "push", `{"ref":"refs/heads/main"}`)
	_, err := b.pool.Exec(ctx, "DELETE FROM river_job WHERE kind = 'process_delivery'") // as River UI's delete
	require.NoError(t, err)
	res, err := jobs.NewOrphanSweeper(b.pool, jobs.OrphanSweepConfig{}).Sweep(ctx, b.river, time.Now().Add(config.DefaultOrphanGrace+time.Minute))
	require.NoError(t, err)
	require.Equal(t, []int64{id}, res.Requeued)

	r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", id), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var d struct{ Attempts []admin.Attempt }
	r.json(t, &d)
	require.Len(t, d.Attempts, 1)
	require.Equal(t, res.Jobs[0], d.Attempts[0].JobID)
	require.Equal(t, []string{jobs.TagOrphanSweep}, d.Attempts[0].Tags)

	r = b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", id), "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "<strong>Orphan sweep: its job was discarded or deleted</strong>")
}
