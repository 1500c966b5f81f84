package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// browserSession signs in as a browser does (the /login form) and returns
// the headers its same-origin requests carry: the session cookie.
func (b *testBundle) browserSession(t *testing.T) map[string]string {
	t.Helper()
	return b.sessionOf(t, token)
}

// sessionOf signs a browser in at /login with tok and returns its session's
// headers.
func (b *testBundle) sessionOf(t *testing.T, tok string) map[string]string {
	t.Helper()
	r := b.do(t, http.MethodPost, "/login", url.Values{"token": {tok}, "next": {"/console/"}}.Encode(), map[string]string{
		"Authorization": "", "Content-Type": "application/x-www-form-urlencoded", "Origin": b.baseURL, "Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Equal(t, "/console/", r.header.Get("Location"))
	c := r.cookie(sessionCookie)
	require.NotNil(t, c)
	return cookieHeader(c)
}

var (
	clickKeyField  = regexp.MustCompile(`name="idempotency_key" value="([^"]+)"`)
	csrfTokenField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
)

// formOf returns the hidden fields a console page renders into its forms.
func formOf(t *testing.T, page []byte) url.Values {
	t.Helper()
	key, csrf := clickKeyField.FindSubmatch(page), csrfTokenField.FindSubmatch(page)
	require.NotNil(t, key, "the page renders an Idempotency-Key: %s", page)
	require.NotNil(t, csrf, "the page renders the CSRF token")
	return url.Values{"idempotency_key": {string(key[1])}, "csrf_token": {string(csrf[1])}}
}

// The pages are server-rendered: everything reads without JavaScript.
func TestConsoleReadsWithoutJavaScript(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	gh := b.deliver(t, "github", "gh-console-1", "issues", `{"action":"opened","issue":{"number":7}}`)
	b.deliver(t, "stripe", "evt_console_1", "charge.succeeded", `{"id":"evt_console_1"}`)
	bin := b.deliver(t, "github", "gh-console-bin", "push", "\xff\xfe")

	r := b.do(t, http.MethodGet, "/", "", nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/console/", r.header.Get("Location"))

	r = b.do(t, http.MethodGet, "/console/deliveries", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
	require.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	for _, id := range []string{"gh-console-1", "evt_console_1", "gh-console-bin"} {
		require.Contains(t, string(r.body), id)
	}

	// The API's filters, as the same query parameters.
	r = b.do(t, http.MethodGet, "/console/deliveries?source=stripe", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "evt_console_1")
	require.NotContains(t, string(r.body), "gh-console-1")
	require.Contains(t, string(r.body), `href="/admin/deliveries?source=stripe"`, "the API's URL for the same list")

	// Keyset pages: one row a page, then the next.
	r = b.do(t, http.MethodGet, "/console/deliveries?limit=1", "", nil)
	require.Contains(t, string(r.body), "gh-console-bin")
	next := regexp.MustCompile(`href="(/console/deliveries\?[^"]*cursor=[^"]+)" rel="next"`).FindSubmatch(r.body)
	require.NotNil(t, next, "%s", r.body)
	r = b.do(t, http.MethodGet, strings.ReplaceAll(string(next[1]), "&amp;", "&"), "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "evt_console_1")
	require.NotContains(t, string(r.body), "gh-console-bin")

	r = b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", gh), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	page := string(r.body)
	require.Contains(t, page, "gh-console-1")
	require.Contains(t, page, "X-Github-Delivery")
	require.Contains(t, page, "&#34;issue&#34;: {\n    &#34;number&#34;: 7", "pretty-printed")
	require.Regexp(t, `id="sha256">[0-9a-f]{64}<`, page)
	require.Contains(t, page, "Ingest</strong>", "its processing job")
	require.Contains(t, page, `<dd id="occurred">— <span class="hint">the provider sent no event time (GitHub never does)`, "an empty time says why")

	r = b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", bin), "", nil)
	require.Contains(t, string(r.body), "Not UTF-8")
	require.Contains(t, string(r.body), "//4=")
}

// Every refusal is a page with the API's status and code.
func TestConsoleErrors(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	for path, want := range map[string]int{
		"/console/deliveries?status=done":     http.StatusBadRequest,
		"/console/deliveries?since=yesterday": http.StatusBadRequest,
		"/console/deliveries?limit=0":         http.StatusBadRequest,
		"/console/deliveries?cursor=zzz":      http.StatusBadRequest,
		"/console/deliveries/rows?after=x":    http.StatusBadRequest,
		"/console/deliveries/424242":          http.StatusNotFound,
		"/console/deliveries/abc":             http.StatusNotFound,
		"/console/nowhere":                    http.StatusNotFound,
		"/console/static/nothing.js":          http.StatusNotFound,
	} {
		r := b.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, want, r.status, "%s: %s", path, r.body)
		require.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"), path)
		require.Contains(t, string(r.body), `id="error-message"`, path)
	}
	r := b.do(t, http.MethodGet, "/console/deliveries", "", map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, string(r.body), `href="/login?next=%2Fconsole%2Fdeliveries"`)
	require.NotContains(t, string(r.body), "Sign out", "offered to someone not signed in")
	require.NotEmpty(t, r.header.Values("WWW-Authenticate"), "the browser's Basic prompt")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("op:"+token))
	r = b.do(t, http.MethodGet, "/console/deliveries", "", map[string]string{"Authorization": basic})
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "Sign out", "a browser signed in with Basic")
}

// The first page polls for what arrived since it was rendered.
func TestConsoleNewDeliveriesPoll(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	first := b.deliver(t, "github", "gh-poll-1", "issues", `{}`)
	r := b.do(t, http.MethodGet, "/console/deliveries?source=github", "", nil)
	poll := fmt.Sprintf("/console/deliveries/rows?after=%d&amp;source=github", first)
	require.Contains(t, string(r.body), `hx-get="`+poll+`"`)
	poll = strings.ReplaceAll(poll, "&amp;", "&")

	r = b.do(t, http.MethodGet, poll, "", nil)
	require.Equal(t, http.StatusNoContent, r.status, "nothing new")
	b.deliver(t, "stripe", "evt_poll_1", "charge.succeeded", `{}`)
	r = b.do(t, http.MethodGet, poll, "", nil)
	require.Equal(t, http.StatusNoContent, r.status, "nothing new that matches")

	second := b.deliver(t, "github", "gh-poll-2", "issues", `{}`)
	r = b.do(t, http.MethodGet, poll, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "gh-poll-2")
	require.NotContains(t, string(r.body), "gh-poll-1")
	require.Contains(t, string(r.body), fmt.Sprintf("after=%d", second), "the next poll starts after it")

	// More than a page came: the page reloads.
	r = b.do(t, http.MethodGet, poll+"&limit=1", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	b.deliver(t, "github", "gh-poll-3", "issues", `{}`)
	r = b.do(t, http.MethodGet, poll+"&limit=1", "", nil)
	require.Equal(t, http.StatusNoContent, r.status)
	require.Equal(t, "true", r.header.Get("HX-Refresh"))
}

// The Replay button runs POST /admin/deliveries/{id}/replay with the
// Idempotency-Key its page rendered: the form posted twice (a double
// click) is one replay, and both posts land on it.
func TestConsoleReplayOncePerClick(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-console-replay", "issues", `{}`)
	browser := b.browserSession(t)
	page := b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", id), "", browser)
	require.Equal(t, http.StatusOK, page.status)
	form := formOf(t, page.body)
	post := with(browser, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin", "Origin": b.baseURL})
	action := fmt.Sprintf("/console/deliveries/%d/replay", id)

	first := b.do(t, http.MethodPost, action, form.Encode(), post)
	require.Equal(t, http.StatusSeeOther, first.status, "%s", first.body)
	require.Regexp(t, fmt.Sprintf(`^/console/deliveries/%d\?replay=\d+$`, id), first.header.Get("Location"))
	second := b.do(t, http.MethodPost, action, form.Encode(), post)
	require.Equal(t, first.header.Get("Location"), second.header.Get("Location"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM api_idempotency WHERE operation = 'replay_delivery'"),
		"the API's contract, under the API's operation")

	// The next page load is another intent: another key, another replay.
	page = b.do(t, http.MethodGet, first.header.Get("Location"), "", browser)
	require.Contains(t, string(page.body), "Replay #")
	again := formOf(t, page.body)
	require.NotEqual(t, form.Get("idempotency_key"), again.Get("idempotency_key"))
	require.Equal(t, http.StatusSeeOther, b.do(t, http.MethodPost, action, again.Encode(), post).status)
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM replay"))

	// The API's refusals, as pages: a key reused for another request, a
	// replay of nothing.
	r := b.do(t, http.MethodPost, "/console/deliveries/424242/replay", again.Encode(), post)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, string(r.body), "idempotency_key_reused")
	again.Set("idempotency_key", "console-test-404")
	r = b.do(t, http.MethodPost, "/console/deliveries/424242/replay", again.Encode(), post)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Contains(t, string(r.body), "no delivery with id 424242")
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM replay"))
}

// A form another site submits carries the session cookie (same-site, as
// another port of this host is) but neither our origin nor the session's
// CSRF token: 403, and nothing is done or stored.
func TestConsoleForgedPostRefused(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-console-forged", "issues", `{}`)
	browser := b.browserSession(t)
	forged := url.Values{"idempotency_key": {"forged"}, "csrf_token": {"guess"}}.Encode()
	for name, h := range map[string]map[string]string{
		"same-site":  {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
		"cross-site": crossSite(),
		"no headers": {},
	} {
		h = with(with(browser, h), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		r := b.do(t, http.MethodPost, fmt.Sprintf("/console/deliveries/%d/replay", id), forged, h)
		require.Equal(t, http.StatusForbidden, r.status, "%s: %s", name, r.body)
		require.Contains(t, string(r.body), "cross_site_request", name)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency"))

	// The page's own token passes without Origin (as under no-referrer).
	page := b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", id), "", browser)
	r := b.do(t, http.MethodPost, fmt.Sprintf("/console/deliveries/%d/replay", id), formOf(t, page.body).Encode(),
		with(browser, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))
}

// holdKey marks key as held by a request still running, as the API's
// first request with it would, for the console's replay of delivery id.
func (b *testBundle) holdKey(t *testing.T, id int64, key string) {
	t.Helper()
	scope := sha256.Sum256([]byte(token))
	hash := sha256.Sum256([]byte(fmt.Sprintf("POST\n/console/deliveries/:id/replay\nid=\"%d\"\n\n", id)))
	_, err := b.pool.Exec(context.Background(), `INSERT INTO api_idempotency
		(scope, operation, idempotency_key, request_hash, state, lock_token, locked_until, expires_at)
		VALUES ($1, 'replay_delivery', $2, $3, 'in_progress', 'someone', now() + interval '1 minute', now() + interval '1 hour')`,
		"token:"+hex.EncodeToString(scope[:8]), key, hash[:])
	require.NoError(t, err)
}

// A second post of a form whose first post still runs (a double click)
// waits for the first one's answer and lands where it does; one that
// still runs after 5 s gets the API's 409 as a page.
func TestConsoleSecondPostWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-console-wait", "issues", `{}`)
	browser := b.browserSession(t)
	form := formOf(t, b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", id), "", browser).body)
	post := with(browser, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	action := fmt.Sprintf("/console/deliveries/%d/replay", id)

	b.holdKey(t, id, "console-wait")
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = b.pool.Exec(context.Background(), `UPDATE api_idempotency SET state = 'completed', status_code = 202,
			response_body = $1, lock_token = NULL, locked_until = NULL WHERE idempotency_key = 'console-wait'`,
			fmt.Sprintf(`{"replay_id":77,"id":%d}`, id))
	}()
	form.Set("idempotency_key", "console-wait")
	r := b.do(t, http.MethodPost, action, form.Encode(), post)
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Equal(t, fmt.Sprintf("/console/deliveries/%d?replay=77", id), r.header.Get("Location"), "the first post's answer")
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"), "nothing done twice")

	b.holdKey(t, id, "console-stuck")
	form.Set("idempotency_key", "console-stuck")
	r = b.do(t, http.MethodPost, action, form.Encode(), post)
	require.Equal(t, http.StatusConflict, r.status)
	require.Contains(t, string(r.body), "request_in_progress")
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
}
