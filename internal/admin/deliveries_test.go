package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

type page struct {
	Items      []admin.Delivery `json:"items"`
	NextCursor *string          `json:"next_cursor"`
}

func TestListDeliveriesPaginatesNewestFirst(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	var ids []int64
	for i := 0; i < 7; i++ {
		ids = append(ids, b.deliver(t, "github", fmt.Sprintf("gh-list-%d", i), "push", `{}`))
	}
	var got []int64
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		q := "/admin/deliveries?limit=3"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := b.do(t, http.MethodGet, q, "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var p page
		r.json(t, &p)
		for _, d := range p.Items {
			got = append(got, d.ID)
		}
		if p.NextCursor == nil {
			require.LessOrEqual(t, len(p.Items), 3)
			break
		}
		cursor = *p.NextCursor
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	require.Equal(t, ids, got)
}

// With until, the list is newest first by received time (then id), so
// that a window back in time reads the received_at index; its cursor holds
// both, and every row comes once.
func TestListDeliveriesUntilPaginatesByReceivedTime(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	base := time.Date(2026, 11, 1, 12, 0, 0, 123456000, time.UTC)
	want := map[int64]time.Time{}
	for i, offset := range []time.Duration{5, 1, 3, 3, 3, 0, 9} {
		id := b.deliver(t, "github", fmt.Sprintf("gh-until-%d", i), "push", `{}`)
		want[id] = base.Add(offset * time.Minute)
		_, err := b.pool.Exec(context.Background(), "UPDATE inbox SET received_at = $2 WHERE id = $1", id, want[id])
		require.NoError(t, err)
	}
	until := url.QueryEscape(base.Add(8 * time.Minute).Format(time.RFC3339))
	var got []admin.Delivery
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		r := b.do(t, http.MethodGet, "/admin/deliveries?limit=2&until="+until+"&cursor="+url.QueryEscape(cursor), "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var p page
		r.json(t, &p)
		got = append(got, p.Items...)
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	require.Len(t, got, 6, "all but the one received after until")
	for i := 1; i < len(got); i++ {
		prev, cur := got[i-1], got[i]
		require.True(t, cur.ReceivedAt.Before(prev.ReceivedAt) || cur.ReceivedAt.Equal(prev.ReceivedAt) && cur.ID < prev.ID,
			"newest first by received time, then id: %d after %d", cur.ID, prev.ID)
		require.True(t, want[cur.ID].Equal(cur.ReceivedAt))
	}

	// A cursor of the id-ordered list is not one of this list.
	r := b.do(t, http.MethodGet, "/admin/deliveries?limit=1", "", nil)
	var p page
	r.json(t, &p)
	r = b.do(t, http.MethodGet, "/admin/deliveries?until="+until+"&cursor="+url.QueryEscape(*p.NextCursor), "", nil)
	require.Equal(t, http.StatusBadRequest, r.status)
}

func TestListDeliveriesFilters(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	ctx := context.Background()
	push := b.deliver(t, "github", "gh-f-1", "push", `{}`)
	issue := b.deliver(t, "github", "gh-f-2", "issues", `{}`)
	paid := b.deliver(t, "stripe", "evt_f_3", "payment_intent.succeeded", `{}`)
	testdb.SetStatus(t, b.pool, "failed", issue)
	_, err := b.pool.Exec(ctx, "UPDATE inbox_outcome SET last_error = 'boom', resource_key = 'acme/app#1' WHERE inbox_id = $1", issue)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, "UPDATE inbox SET received_at = now() - interval '2 days' WHERE id = $1", push)
	require.NoError(t, err)
	yesterday := time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339)

	for q, want := range map[string][]int64{
		"source=github":                 {issue, push},
		"source=stripe":                 {paid},
		"status=failed":                 {issue},
		"event_type=push":               {push},
		"resource=acme/app%231":         {issue},
		"since=" + yesterday:            {paid, issue},
		"until=" + yesterday:            {push},
		"source=github&status=received": {push},
	} {
		r := b.do(t, http.MethodGet, "/admin/deliveries?"+q, "", nil)
		require.Equal(t, http.StatusOK, r.status, q)
		var p page
		r.json(t, &p)
		var got []int64
		for _, d := range p.Items {
			got = append(got, d.ID)
		}
		require.Equal(t, want, got, q)
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=x", "since=yesterday", "cursor=nope", "status=bogus", "status=FAILED"} {
		r := b.do(t, http.MethodGet, "/admin/deliveries?"+q, "", nil)
		require.Equal(t, http.StatusBadRequest, r.status, q)
		require.Equal(t, "bad_request", r.errorCode(t), q)
	}
	// An unknown status is a mistake to name, not an empty match.
	r := b.do(t, http.MethodGet, "/admin/deliveries?status=bogus", "", nil)
	require.Contains(t, string(r.body), "received, processed, skipped, failed")
}

func TestGetDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id := b.deliver(t, "github", "gh-get-1", "push", `{"ref":"refs/heads/main"}`)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM delivery WHERE id = $1 AND status = 'skipped'", id) == 1
	}, 10*time.Second, 20*time.Millisecond)
	_, err := b.pool.Exec(ctx, `INSERT INTO handler_step (key, source, delivery_id, handler, step) VALUES ('hkb_x', 'github', 'gh-get-1', 'h', 'notify')`)
	require.NoError(t, err)

	r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", id), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var d admin.DeliveryDetail
	r.json(t, &d)
	require.Equal(t, `{"ref":"refs/heads/main"}`, d.Payload)
	require.False(t, d.PayloadBase64)
	require.Len(t, d.SHA256, 64)
	require.Equal(t, []string{"gh-get-1"}, d.Headers["X-Github-Delivery"])
	require.Equal(t, "skipped", d.Status)
	require.Len(t, d.Attempts, 1)
	require.Equal(t, "completed", d.Attempts[0].State)
	require.Nil(t, d.Attempts[0].ReplayID)
	require.Equal(t, []admin.DerivedKey{{Handler: "h", Step: "notify", Key: "hkb_x", CreatedAt: d.Keys[0].CreatedAt}}, d.Keys)
	require.Nil(t, d.Stale, "skipped: no handler judged it")
	_, err = b.pool.Exec(ctx, `UPDATE inbox_outcome SET stale = true WHERE inbox_id = $1`, id)
	require.NoError(t, err)
	b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", id), "", nil).json(t, &d)
	require.NotNil(t, d.Stale)
	require.True(t, *d.Stale, "what processing recorded")

	bin := b.deliver(t, "github", "gh-get-2", "push", "\xff\xfe")
	r = b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", bin), "", nil)
	r.json(t, &d)
	require.True(t, d.PayloadBase64)
	require.Equal(t, "//4=", d.Payload)

	r = b.do(t, http.MethodGet, "/admin/deliveries/424242", "", nil)
	require.Equal(t, http.StatusNotFound, r.status)
	r = b.do(t, http.MethodGet, "/admin/deliveries/abc", "", nil)
	require.Equal(t, http.StatusNotFound, r.status)
}

// A delivery ingest recorded in a batch was processed by its batch's job:
// that job is its first attempt, a replay's the next.
func TestDeliveryAttemptsIncludeItsBatchsJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.inbox.JobPerBatch = true
	var ids []int64
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var ds []ingest.Delivery
		for _, id := range []string{"gh-batch-1", "gh-batch-2", "gh-batch-3"} {
			ds = append(ds, ingest.Delivery{Source: "github", DeliveryID: id, EventType: "push", Payload: []byte(`{}`)})
		}
		recs, errs, err := b.inbox.RecordManyTx(ctx, tx, ds)
		for i, rec := range recs {
			require.NoError(t, errs[i])
			ids = append(ids, rec.ID)
		}
		return err
	}))
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM delivery WHERE id = ANY($1) AND status = 'skipped'", ids) == 3
	}, 10*time.Second, 20*time.Millisecond)
	r := b.do(t, http.MethodPost, fmt.Sprintf("/admin/deliveries/%d/replay", ids[1]), "", nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM river_job WHERE state = 'completed'") == 2
	}, 10*time.Second, 20*time.Millisecond)

	var d admin.DeliveryDetail
	b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", ids[1]), "", nil).json(t, &d)
	require.Len(t, d.Attempts, 2)
	require.Equal(t, "process_deliveries", d.Attempts[0].Kind)
	require.Equal(t, "completed", d.Attempts[0].State)
	require.Nil(t, d.Attempts[0].ReplayID)
	require.Equal(t, "Ingest, with its batch", d.Attempts[0].EnqueuedBy())
	require.Equal(t, "process_delivery", d.Attempts[1].Kind)
	require.NotNil(t, d.Attempts[1].ReplayID)
	require.Equal(t, fmt.Sprintf("Replay #%d", *d.Attempts[1].ReplayID), d.Attempts[1].EnqueuedBy())
	b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", ids[2]), "", nil).json(t, &d)
	require.Len(t, d.Attempts, 1, "the batch's job, and no one else's replay")
	require.Equal(t, "process_deliveries", d.Attempts[0].Kind)
}
