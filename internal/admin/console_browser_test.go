package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/browsertest"
)

// browser drives one tab against the console.
type browser struct {
	t   *testing.T
	ctx context.Context
	b   *testBundle
}

// newBrowser starts Chromium and signs in through the /login form, as a
// person would.
func newBrowser(t *testing.T, b *testBundle) *browser {
	t.Helper()
	br := &browser{t: t, ctx: browsertest.New(t), b: b}
	br.do(chromedp.Navigate(b.baseURL+"/login?next=/console/deliveries"),
		chromedp.SendKeys(chromedp.CSS("#token"), token))
	// The sign-in page wears the console's stylesheet: its form is the
	// narrow card, not a bare page.
	require.Equal(t, 1, br.eval(`getComputedStyle(document.querySelector("main.signin")).maxWidth === "384px" ? 1 : 0`),
		"the sign-in page is unstyled")
	br.navigate(chromedp.Submit(chromedp.CSS("#token")))
	br.do(chromedp.WaitVisible(chromedp.CSS("form.filters")))
	return br
}

// do runs actions, failing the test after 30 s.
func (br *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	br.t.Helper()
	ctx, cancel := context.WithTimeout(br.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		br.explain()
		require.NoError(br.t, err)
	}
}

// explain logs where the tab is and what it shows, for a failure.
func (br *browser) explain() {
	ctx, cancel := context.WithTimeout(br.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	br.t.Logf("the tab is at %s and shows:\n%s", loc, text)
	browsertest.Screenshot(br.t, br.ctx, "failure")
}

// navigate runs an action that loads a page and waits for its response.
func (br *browser) navigate(action chromedp.Action[chromedp.Void]) {
	br.t.Helper()
	ctx, cancel := context.WithTimeout(br.ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.RunResponse(ctx, action)
	require.NoError(br.t, err)
}

func (br *browser) text(sel string) string {
	br.t.Helper()
	ctx, cancel := context.WithTimeout(br.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(br.t, err)
	return s
}

func (br *browser) eval(js string) int {
	br.t.Helper()
	n, err := chromedp.Run(br.ctx, chromedp.Evaluate[int](js))
	require.NoError(br.t, err)
	return n
}

// doubleClick clicks an element twice, 30 ms apart, as a double click
// does. The clicks run in the page (trusted mouse events sent over the
// DevTools protocol can hang when the first one's navigation swaps the
// page), so the second one never reaches the page the first one loads.
func (br *browser) doubleClick(sel string) {
	br.t.Helper()
	_, err := chromedp.Run(br.ctx, chromedp.Evaluate[bool](fmt.Sprintf(
		`(() => { const b = document.querySelector(%q); b.click(); setTimeout(() => b.click(), 30); return true; })()`, sel)))
	require.NoError(br.t, err)
}

// The console in a real browser: sign in, see the charts, filter, watch a
// new delivery arrive, open a failed delivery, replay it with a double
// click (one replay) and watch it turn processed, follow a bulk replay
// to 100%, see a conflict's diff;
// a form on another site that posts to the console is refused.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel()
	browsertest.Path(t)
	var failing atomic.Bool
	failing.Store(true)
	b := setupWith(t, setupOpts{riverUI: true, handlers: func(reg *handlers.Registry) {
		require.NoError(t, reg.Register(handlers.Registration{Name: "console-test", Source: "github", Events: []string{"issues"},
			Handler: handlers.HandlerFunc(func(context.Context, *handlers.Event) error {
				if failing.Load() {
					return handlers.Permanent(errors.New("the downstream said no"))
				}
				return nil
			})}))
	}})
	failed := b.deliver(t, "github", "gh-browser-1", "issues", `{"action":"opened","issue":{"number":1,"title":"Bug"}}`)
	b.deliver(t, "github", "gh-browser-2", "push", `{"ref":"refs/heads/main"}`)
	b.deliver(t, "stripe", "evt_browser_1", "charge.succeeded", `{"id":"evt_browser_1"}`)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM delivery WHERE status = 'received'") == 0
	}, 10*time.Second, 20*time.Millisecond)

	// A day of traffic for the charts: a wave of accepted requests, some
	// duplicates, a burst of bad signatures.
	_, err := b.pool.Exec(context.Background(), `INSERT INTO ingest_minute (minute, source, outcome, count)
		SELECT m, s, o, n FROM generate_series(date_trunc('minute', now()) - interval '1439 minutes', date_trunc('minute', now()), interval '1 minute') m
		CROSS JOIN LATERAL (VALUES
			('github', 'accepted', (20 + 15 * sin(extract(epoch FROM m) / 7200))::int),
			('github', 'duplicate', (extract(minute FROM m)::int % 7)),
			('github', 'invalid_signature', CASE WHEN extract(hour FROM m) = 3 THEN 9 ELSE 0 END),
			('stripe', 'accepted', (8 + 6 * cos(extract(epoch FROM m) / 5400))::int),
			('stripe', 'unavailable', CASE WHEN extract(hour FROM m) = 11 AND extract(minute FROM m) < 20 THEN 12 ELSE 0 END)
		) AS v (s, o, n) WHERE n > 0`)
	require.NoError(t, err)

	br := newBrowser(t, b)
	t.Run("overview", func(t *testing.T) {
		br.t = t
		br.navigate(chromedp.Navigate(b.baseURL + "/console/"))
		br.do(chromedp.WaitVisible(chromedp.CSS(`.chart[data-source=github] canvas`)),
			chromedp.WaitVisible(chromedp.CSS(`.chart[data-source=stripe] canvas`)))
		require.Equal(t, "1", br.text("#failed"))
		browsertest.Screenshot(t, br.ctx, "console-overview")
	})
	t.Run("filter", func(t *testing.T) {
		br.t = t
		br.navigate(chromedp.Click(chromedp.CSS(`nav a[href="/console/deliveries"]`)))
		br.do(chromedp.SetValue(chromedp.CSS(`select[name=status]`), "failed"))
		br.navigate(chromedp.Click(chromedp.CSS(`form.filters button[type=submit]`)))
		loc, err := chromedp.Run(br.ctx, chromedp.Location())
		require.NoError(t, err)
		require.Contains(t, loc, "/console/deliveries?", "a shareable URL")
		require.Contains(t, loc, "status=failed")
		require.Equal(t, 1, br.eval(`document.querySelectorAll("#rows tr[id^=d]").length`))
		require.Contains(t, br.text(fmt.Sprintf("#d%d", failed)), "gh-browser-1")
		browsertest.Screenshot(t, br.ctx, "console-deliveries-filtered")
	})
	t.Run("new deliveries appear", func(t *testing.T) {
		br.t = t
		br.navigate(chromedp.Navigate(b.baseURL + "/console/deliveries"))
		id := b.deliver(t, "stripe", "evt_browser_live", "charge.refunded", `{}`)
		br.do(chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf("#d%d", id))))
		require.Equal(t, fmt.Sprintf("d%d", id), strings.TrimSpace(func() string {
			s, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](`document.querySelector("#rows tr[id^=d]").id`))
			require.NoError(t, err)
			return s
		}()), "on top")
		browsertest.Screenshot(t, br.ctx, "console-deliveries")
	})
	t.Run("open, replay, processed", func(t *testing.T) {
		br.t = t
		br.navigate(chromedp.Click(chromedp.CSS(fmt.Sprintf("#d%d a", failed))))
		require.Equal(t, "failed", br.text("#live .status"))
		require.Contains(t, br.text("#last-error"), "the downstream said no")
		require.Contains(t, br.text("#payload"), `"title": "Bug"`)
		browsertest.Screenshot(t, br.ctx, "console-delivery-failed")

		failing.Store(false)
		br.doubleClick("#replay")
		br.do(chromedp.WaitVisible(chromedp.CSS("#replay-notice")),
			chromedp.WaitVisible(chromedp.CSS("#live .status-processed")))
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"), "a double click replays once")
		require.Contains(t, br.text("#attempts"), "Replay #")
		browsertest.Screenshot(t, br.ctx, "console-delivery")
	})
	t.Run("bulk replay to 100%", func(t *testing.T) {
		br.t = t
		br.navigate(chromedp.Click(chromedp.CSS(`nav a[href="/console/bulk-replays/new"]`)))
		br.do(chromedp.SetValue(chromedp.CSS(`#preview select[name=status]`), "skipped"))
		br.navigate(chromedp.Click(chromedp.CSS(`#preview button[type=submit]`)))
		require.Equal(t, "3", br.text("#preview-replays"))
		browsertest.Screenshot(t, br.ctx, "console-bulk-replay-preview")
		br.navigate(chromedp.Click(chromedp.CSS("#start")))
		ctx, cancel := context.WithTimeout(br.ctx, 30*time.Second)
		defer cancel()
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("percent").textContent === "100%"`))
		require.NoError(t, err, "the progress bar follows the bulk replay to 100%%")
		require.Equal(t, 4, b.count(t, "SELECT count(*) FROM replay"), "the earlier replay and three")
		browsertest.Screenshot(t, br.ctx, "console-bulk-replay")
	})
	t.Run("conflict diff", func(t *testing.T) {
		br.t = t
		b.deliver(t, "stripe", "evt_browser_conflict", "charge.succeeded",
			`{"id":"evt_browser_conflict","type":"charge.succeeded","data":{"object":{"id":"ch_1","amount":1999,"currency":"eur","status":"succeeded"}}}`)
		id := b.conflict(t, "stripe", "evt_browser_conflict",
			`{"id":"evt_browser_conflict","type":"charge.succeeded","data":{"object":{"id":"ch_1","amount":2999,"currency":"eur","status":"succeeded"}}}`)
		br.navigate(chromedp.Click(chromedp.CSS(`nav a[href="/console/conflicts"]`)))
		br.navigate(chromedp.Click(chromedp.CSS(fmt.Sprintf("#c%d a", id))))
		require.Contains(t, br.text("#diff td.del"), `"amount": 1999`)
		require.Contains(t, br.text("#diff td.add"), `"amount": 2999`)
		browsertest.Screenshot(t, br.ctx, "console-conflict")
	})
	t.Run("cross-site post refused", func(t *testing.T) {
		br.t = t
		// Another port of this host: same-site, so the SameSite=Strict
		// session cookie goes along; neither our origin nor the CSRF token.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `<!DOCTYPE html><form id="f" method="post" action="%s/console/deliveries/%d/replay">`+
				`<input name="idempotency_key" value="forged"></form><script>document.getElementById("f").submit()</script>`, b.baseURL, failed)
		}))
		defer evil.Close()
		replays := b.count(t, "SELECT count(*) FROM replay")
		br.do(chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.CSS("#error-message")))
		require.Contains(t, br.text("#error-message"), "cross_site_request")
		require.Contains(t, br.text("h1"), "403")
		require.Equal(t, replays, b.count(t, "SELECT count(*) FROM replay"), "nothing replayed")
		require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency WHERE idempotency_key = 'forged'"))
		browsertest.Screenshot(t, br.ctx, "console-cross-site-refused")
	})
}
