package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestReplayDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-replay-1", "push", `{}`)
	r := b.do(t, http.MethodPost, fmt.Sprintf("/admin/deliveries/%d/replay", id), "", nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var resp struct {
		ReplayID   int64  `json:"replay_id"`
		ID         int64  `json:"id"`
		DeliveryID string `json:"delivery_id"`
		JobID      int64  `json:"job_id"`
	}
	r.json(t, &resp)
	require.Equal(t, id, resp.ID)
	require.Equal(t, "gh-replay-1", resp.DeliveryID)
	require.NotZero(t, resp.ReplayID)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM river_job WHERE id = $1 AND state = 'completed'", resp.JobID) == 1
	}, 10*time.Second, 20*time.Millisecond, "the replay job ran")

	r = b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", id), "", nil)
	var d admin.DeliveryDetail
	r.json(t, &d)
	require.Len(t, d.Attempts, 2)
	require.Equal(t, resp.ReplayID, *d.Attempts[1].ReplayID)

	r = b.do(t, http.MethodPost, "/admin/deliveries/999999/replay", "", nil)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay WHERE inbox_id = 999999"))
}

func TestBulkReplay(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	ctx := context.Background()
	var failed []int64
	for i := 0; i < 5; i++ {
		id := b.deliver(t, "github", fmt.Sprintf("gh-bulk-%d", i), "push", `{}`)
		if i != 2 {
			failed = append(failed, id)
		}
	}
	b.deliver(t, "stripe", "evt_bulk", "payment_intent.succeeded", `{}`)
	_, err := b.pool.Exec(ctx, "UPDATE inbox SET status = 'failed' WHERE id = ANY($1)", failed)
	require.NoError(t, err)

	r := b.do(t, http.MethodPost, "/admin/replays", `{"source":"github","status":"failed","limit":3}`, nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var br jobs.BulkReplay
	r.json(t, &br)
	require.Equal(t, 3, br.Matched, "limit caps the match")
	require.Equal(t, "running", br.State)
	require.Equal(t, fmt.Sprintf("/admin/replays/%d", br.ID), r.header.Get("Location"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"), "the request itself replays nothing")

	// Now work the jobs: the bulk job enqueues, the replays run.
	startWorker(t, b.pool)
	require.Eventually(t, func() bool {
		r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/replays/%d", br.ID), "", nil)
		r.json(t, &br)
		return br.State == "finished" && br.Done == 3
	}, 15*time.Second, 50*time.Millisecond, "bulk replay: %+v", &br)
	require.Equal(t, 3, br.Enqueued)
	require.Equal(t, failed[:3], replayedInboxIDs(t, b))

	for body, want := range map[string]int{
		`{"status":"exploded"}`:   http.StatusBadRequest,
		`{"limit":100001}`:        http.StatusBadRequest,
		`{"since":"yesterday"}`:   http.StatusBadRequest,
		`{"sourc":"github"}`:      http.StatusBadRequest,
		`not json`:                http.StatusBadRequest,
		`{"limit":1} {"limit":2}`: http.StatusBadRequest, // one object, nothing after it
		`{"limit":1} x`:           http.StatusBadRequest,
	} {
		r := b.do(t, http.MethodPost, "/admin/replays", body, nil)
		require.Equal(t, want, r.status, body)
	}
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM bulk_replay"), "bad requests wrote nothing")
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/admin/replays/9999", "", nil).status)
}

func replayedInboxIDs(t *testing.T, b *testBundle) []int64 {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT inbox_id FROM replay ORDER BY inbox_id")
	require.NoError(t, err)
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	return ids
}
