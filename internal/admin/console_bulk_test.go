package admin_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bulk replay: the form previews how many deliveries its filter selects,
// starts POST /admin/bulk-replays once per click, and the progress page
// follows GET /admin/bulk-replays/{id} to 100%.
func TestConsoleBulkReplay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, id := range []string{"gh-bulk-1", "gh-bulk-2", "gh-bulk-3"} {
		b.deliver(t, "github", id, "push", `{}`)
	}
	b.deliver(t, "stripe", "evt_bulk_1", "charge.succeeded", `{}`)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM delivery WHERE status = 'skipped'") == 4
	}, 10*time.Second, 20*time.Millisecond)
	browser := b.browserSession(t)

	r := b.do(t, http.MethodGet, "/console/bulk-replays/new", "", browser)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), `id="start"`, "nothing to start before a preview")

	r = b.do(t, http.MethodGet, "/console/bulk-replays/new?source=github&status=failed", "", browser)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `<button type="submit" id="start" disabled>Nothing to replay</button>`, "no active button for none")
	r = b.do(t, http.MethodGet, "/console/bulk-replays/new?source=github&status=skipped&limit=1", "", browser)
	require.Contains(t, string(r.body), `<button type="submit" id="start">Replay 1 delivery</button>`)

	r = b.do(t, http.MethodGet, "/console/bulk-replays/new?source=github&status=skipped&limit=2", "", browser)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), "<strong>3</strong> deliveries match")
	require.Contains(t, string(r.body), `id="preview-replays">2<`)
	require.Contains(t, string(r.body), `<button type="submit" id="start">Replay 2 deliveries</button>`)
	form := formOf(t, r.body)
	for k, v := range map[string]string{"source": "github", "status": "skipped", "limit": "2", "event_type": "", "since": "", "until": ""} {
		form.Set(k, v)
	}
	post := with(browser, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	first := b.do(t, http.MethodPost, "/console/bulk-replays", form.Encode(), post)
	require.Equal(t, http.StatusSeeOther, first.status, "%s", first.body)
	require.Regexp(t, `^/console/bulk-replays/\d+$`, first.header.Get("Location"))
	second := b.do(t, http.MethodPost, "/console/bulk-replays", form.Encode(), post)
	require.Equal(t, first.header.Get("Location"), second.header.Get("Location"), "a double click starts one")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM bulk_replay"))

	progress := first.header.Get("Location") + "/progress"
	require.Eventually(t, func() bool {
		r := b.do(t, http.MethodGet, progress, "", browser)
		return regexp.MustCompile(`id="percent">100%<`).Match(r.body)
	}, 20*time.Second, 50*time.Millisecond)
	r = b.do(t, http.MethodGet, first.header.Get("Location"), "", browser)
	require.Contains(t, string(r.body), "2 of 2 replays finished")
	require.NotContains(t, string(r.body), "hx-trigger", "finished: no more polling")
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM replay"))

	// The API's refusals, as pages.
	for path, want := range map[string]int{
		"/console/bulk-replays/new?status=done":  http.StatusBadRequest,
		"/console/bulk-replays/new?limit=0":      http.StatusBadRequest,
		"/console/bulk-replays/new?until=monday": http.StatusBadRequest,
		"/console/bulk-replays/424242":           http.StatusNotFound,
		"/console/bulk-replays/424242/progress":  http.StatusNotFound,
	} {
		r := b.do(t, http.MethodGet, path, "", browser)
		require.Equal(t, want, r.status, path)
		require.Contains(t, string(r.body), `id="error-message"`, path)
	}
	bad := url.Values{"csrf_token": form["csrf_token"], "idempotency_key": {"console-bad-limit"}, "limit": {"many"}}
	r = b.do(t, http.MethodPost, "/console/bulk-replays", bad.Encode(), post)
	require.Equal(t, http.StatusBadRequest, r.status)
	bad.Set("limit", "")
	bad.Set("status", "done")
	r = b.do(t, http.MethodPost, "/console/bulk-replays", bad.Encode(), post)
	require.Equal(t, http.StatusBadRequest, r.status, "the API's own check")
	require.Contains(t, string(r.body), "status must be one of")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM bulk_replay"))
}
