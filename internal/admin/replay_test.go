package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestReplayDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-replay-1", "push", `{}`)
	r := b.do(t, http.MethodPost, fmt.Sprintf("/admin/deliveries/%d/replay", id), "", nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var resp admin.Replay
	r.json(t, &resp)
	require.Equal(t, id, resp.ID)
	require.Equal(t, "github", resp.Source)
	require.Equal(t, "gh-replay-1", resp.DeliveryID)
	require.NotZero(t, resp.ReplayID)
	require.Nil(t, resp.BulkReplayID)
	require.Equal(t, fmt.Sprintf("/admin/replays/%d", resp.ReplayID), r.header.Get("Location"))
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM river_job WHERE id = $1 AND state = 'completed'", resp.JobID) == 1
	}, 10*time.Second, 20*time.Millisecond, "the replay job ran")

	// The replay is a resource of its own, at the id it was answered with.
	r = b.do(t, http.MethodGet, fmt.Sprintf("/admin/replays/%d", resp.ReplayID), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var got admin.Replay
	r.json(t, &got)
	require.Equal(t, "completed", *got.JobState)
	got.JobState = resp.JobState
	require.Equal(t, resp, got)
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/admin/replays/999999", "", nil).status)

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
	var failed []int64
	for i := 0; i < 5; i++ {
		id := b.deliver(t, "github", fmt.Sprintf("gh-bulk-%d", i), "push", `{}`)
		if i != 2 {
			failed = append(failed, id)
		}
	}
	b.deliver(t, "stripe", "evt_bulk", "payment_intent.succeeded", `{}`)
	testdb.SetStatus(t, b.pool, "failed", failed...)

	r := b.do(t, http.MethodPost, "/admin/bulk-replays", `{"source":"github","status":"failed","limit":3}`, nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var br jobs.BulkReplay
	r.json(t, &br)
	require.Equal(t, 3, br.Matched, "limit caps the match")
	require.Equal(t, "running", br.State)
	require.Equal(t, fmt.Sprintf("/admin/bulk-replays/%d", br.ID), r.header.Get("Location"))
	require.Contains(t, string(r.body), fmt.Sprintf(`"bulk_replay_id":%d`, br.ID))
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"), "the request itself replays nothing")

	// Now work the jobs: the bulk job enqueues, the replays run.
	startWorker(t, b.pool, nil)
	require.Eventually(t, func() bool {
		r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/bulk-replays/%d", br.ID), "", nil)
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
		r := b.do(t, http.MethodPost, "/admin/bulk-replays", body, nil)
		require.Equal(t, want, r.status, body)
	}
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM bulk_replay"), "bad requests wrote nothing")
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/admin/bulk-replays/9999", "", nil).status)
}

// Replays and bulk replays are two resources with an id space and a route
// each: replay 1 and bulk replay 1 are different things at different
// addresses, and each replay a bulk replay makes is at /admin/replays/{id}.
func TestReplayAndBulkReplayIDs(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	single := b.deliver(t, "github", "gh-ids-1", "push", `{}`)
	bulkOnly := b.deliver(t, "stripe", "evt_ids_2", "payment_intent.succeeded", `{}`)

	r := b.do(t, http.MethodPost, fmt.Sprintf("/admin/deliveries/%d/replay", single), "", nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var one admin.Replay
	r.json(t, &one)

	r = b.do(t, http.MethodPost, "/admin/bulk-replays", `{"source":"stripe"}`, nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var bulk struct {
		ID int64 `json:"bulk_replay_id"`
	}
	r.json(t, &bulk)
	require.Equal(t, one.ReplayID, bulk.ID, "both are the first of their kind")

	r = b.do(t, http.MethodGet, fmt.Sprintf("/admin/replays/%d", one.ReplayID), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var got admin.Replay
	r.json(t, &got)
	require.Equal(t, single, got.ID, "/admin/replays/{id} is the single replay, not the bulk one")
	require.Nil(t, got.BulkReplayID)

	// The bulk replay's own replay, once its job enqueued it, links back.
	startWorker(t, b.pool, nil)
	var made int64
	require.Eventually(t, func() bool {
		return b.pool.QueryRow(context.Background(), "SELECT id FROM replay WHERE inbox_id = $1", bulkOnly).Scan(&made) == nil
	}, 15*time.Second, 50*time.Millisecond)
	r = b.do(t, http.MethodGet, fmt.Sprintf("/admin/replays/%d", made), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &got)
	require.Equal(t, bulkOnly, got.ID)
	require.Equal(t, bulk.ID, *got.BulkReplayID)

	// The old bulk route is gone, and says where it went.
	r = b.do(t, http.MethodPost, "/admin/replays", `{"source":"stripe"}`, nil)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Contains(t, string(r.body), "/admin/bulk-replays")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM bulk_replay"))
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
