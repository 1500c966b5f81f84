package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The Overview reads the per-minute counts, the backlog and the failures
// from the database, and the same numbers stand as text for readers
// without JavaScript.
func TestConsoleOverview(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	ctx := context.Background()
	b.deliver(t, "github", "gh-over-1", "issues", `{}`)
	failed := b.deliver(t, "github", "gh-over-2", "issues", `{}`)
	testdb.SetStatus(t, b.pool, "failed", failed)
	_, err := b.pool.Exec(ctx, `INSERT INTO ingest_minute (minute, source, outcome, count) VALUES
		(date_trunc('minute', now()) - interval '5 minutes', 'github', 'accepted', 3),
		(date_trunc('minute', now()) - interval '5 minutes', 'github', 'invalid_signature', 2),
		(date_trunc('minute', now()) - interval '4 minutes', 'github', 'timestamp_out_of_tolerance', 1),
		(date_trunc('minute', now()) - interval '4 minutes', 'github', 'missing_header', 1),
		(date_trunc('minute', now()) - interval '4 minutes', 'github', 'duplicate_body', 2),
		(date_trunc('minute', now()) - interval '25 hours', 'github', 'accepted', 100)`)
	require.NoError(t, err)

	r := b.do(t, http.MethodGet, "/console/", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	page := string(r.body)
	require.Contains(t, page, `id="backlog">1<`)
	require.Contains(t, page, `href="/console/deliveries?source=github&amp;status=failed">1</a>`)
	// accepted, duplicate, duplicate_body, conflict, invalid_signature,
	// rejected, unavailable: the minute 25 hours ago is outside the chart's
	// day.
	require.Regexp(t, `(?s)<td class="num">3</td><td class="num">0</td><td class="num">2</td><td class="num">0</td><td class="num">3</td><td class="num">1</td><td class="num">0</td>`, page)
	require.Regexp(t, `<script type="application/json" id="chart-data">\{"start":\d+,"groups":\["accepted",`, page)
	require.Contains(t, page, "No destination is configured")
	// Minutes ago and a day ago: the chart spans the shortest window that
	// holds the day's counts, so they are not a spike at a day's edge.
	require.Contains(t, page, `last <span id="window">15m</span>`)
	require.Equal(t, 15, chartMinutes(t, page))

	_, err = b.pool.Exec(ctx, `INSERT INTO ingest_minute (minute, source, outcome, count) VALUES
		(date_trunc('minute', now()) - interval '30 minutes', 'github', 'unavailable', 1)`)
	require.NoError(t, err)
	page = string(b.do(t, http.MethodGet, "/console/", "", nil).body)
	require.Contains(t, page, `last <span id="window">1h</span>`)
	require.Equal(t, 60, chartMinutes(t, page))

	_, err = b.pool.Exec(ctx, `INSERT INTO ingest_minute (minute, source, outcome, count) VALUES
		(date_trunc('minute', now()) - interval '3 hours', 'github', 'accepted', 4)`)
	require.NoError(t, err)
	page = string(b.do(t, http.MethodGet, "/console/", "", nil).body)
	require.Contains(t, page, `last <span id="window">6h</span>`, "the older count widens it")
	require.Equal(t, 6*60, chartMinutes(t, page))
	require.Regexp(t, `<td class="num">7</td>`, page, "the totals are the window's")

	r = b.do(t, http.MethodGet, "/console/?window=1h", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `<strong>1h</strong>`, "a window asked for")
	require.Equal(t, 60, chartMinutes(t, string(r.body)))
	require.Regexp(t, `<td class="num">3</td><td class="num">0</td>`, string(r.body), "the 3-hour-old count is outside it")
	require.Equal(t, 24*60, chartMinutes(t, string(b.do(t, http.MethodGet, "/console/?window=24h", "", nil).body)))
	r = b.do(t, http.MethodGet, "/console/?window=7d", "", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "counts are kept 48 h: no longer window")
}

// chartMinutes is how many minutes the page's chart data spans.
func chartMinutes(t *testing.T, page string) int {
	t.Helper()
	m := regexp.MustCompile(`id="chart-data">(.*?)</script>`).FindStringSubmatch(page)
	require.NotNil(t, m)
	var d struct {
		Series map[string][][]int `json:"series"`
	}
	require.NoError(t, json.Unmarshal([]byte(m[1]), &d))
	for _, s := range d.Series {
		return len(s[0])
	}
	t.Fatal("no series")
	return 0
}

// The Overview's destination buttons run the API's pause, resume and
// retry, each once per click.
func TestConsoleDestinationButtons(t *testing.T) {
	t.Parallel()
	b, recv := setupDestinations(t)
	b.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	browser := b.browserSession(t)
	post := with(browser, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	action := regexp.MustCompile(`action="(/console/destinations/app/\w+)">\s*<input type="hidden" name="csrf_token" value="([^"]+)"><input type="hidden" name="idempotency_key" value="([^"]+)">`)
	click := func(name string) {
		t.Helper()
		page := b.do(t, http.MethodGet, "/console/", "", browser)
		require.Equal(t, http.StatusOK, page.status, "%s", page.body)
		for _, m := range action.FindAllStringSubmatch(string(page.body), -1) {
			if m[1] == "/console/destinations/app/"+name {
				form := "csrf_token=" + m[2] + "&idempotency_key=" + m[3]
				for range 2 { // a double click
					r := b.do(t, http.MethodPost, m[1], form, post)
					require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
					require.Equal(t, "/console/#destinations", r.header.Get("Location"))
				}
				return
			}
		}
		t.Fatalf("no %s button: %s", name, page.body)
	}

	retryButton := regexp.MustCompile(`<button type="submit"( disabled)?[^>]*>Retry failed</button>`)
	row := func() string {
		t.Helper()
		page := b.do(t, http.MethodGet, "/console/", "", browser)
		require.Equal(t, http.StatusOK, page.status, "%s", page.body)
		return regexp.MustCompile(`(?s)<tr id="dest-app">.*?</tr>`).FindString(string(page.body))
	}
	m := retryButton.FindStringSubmatch(row())
	require.NotNil(t, m)
	require.Equal(t, " disabled", m[1], "nothing to retry: the button is off")
	require.Contains(t, row(), "<td class=\"last-error\">—</td>", "never failed")

	click("pause")
	require.Equal(t, "paused", b.destinations(t)[0].State)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM api_idempotency WHERE operation = 'destination_pause'"))
	recv.SetFallback(receiver.Fail)
	id := "msg_console_dest"
	b.deliver(t, "billing", id, "invoice.paid", `{"type":"invoice.paid","data":{"id":"inv_9"}}`)
	click("resume")
	require.Eventually(t, func() bool { return b.sendState(t, id) == "failed" }, 10*time.Second, 20*time.Millisecond)
	page := b.do(t, http.MethodGet, "/console/", "", browser)
	require.Regexp(t, `<td class="num"><a href="/console/deliveries\?send_status=failed&amp;destination=app">1</a></td>\s*<td class="actions">`,
		string(page.body), "one failed send, a link to it")
	failing := row()
	require.Empty(t, retryButton.FindStringSubmatch(failing)[1], "a failed send to retry: the button is on")
	require.Regexp(t, `<span class="error">HTTP 500[^<]*</span> <span class="hint">at \d{4}-`, failing, "the current error, with its time")

	recv.SetFallback(receiver.Apply)
	click("retry")
	require.Eventually(t, func() bool { return b.sendState(t, id) == "succeeded" }, 10*time.Second, 20*time.Millisecond)
	require.Len(t, recv.Effects(), 1)
	// Recovered: the old error is no longer shown as current.
	require.Eventually(t, func() bool { return b.destinations(t)[0].FailingSince == nil }, 10*time.Second, 20*time.Millisecond)
	st := b.destinations(t)[0]
	require.Nil(t, st.LastError, "the API shows no current error either")
	require.NotNil(t, st.LastErrorAt, "and keeps the time of the last")
	recovered := row()
	require.NotContains(t, recovered, "HTTP 500")
	require.Regexp(t, `none; the last, at \d{4}-[^,]+, was resolved`, recovered)
}
