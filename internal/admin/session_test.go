package admin_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
)

const sessionCookie = "hookinbox_session"

// What a browser sends when it loads a page: a navigation, here one the
// user typed (http://x:TOKEN@host/… or after the Basic prompt).
func navigation(auth string) map[string]string {
	return map[string]string{"Authorization": auth, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
		"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "none"}
}

func cookieHeader(c *http.Cookie) map[string]string {
	return map[string]string{"Authorization": "", "Cookie": c.Name + "=" + c.Value}
}

// A page loaded with Basic starts a session and is sent to its own URL
// without userinfo; the cookie then authenticates the page and its fetch()
// calls, and state changes with it follow the cross-site rule.
func TestBasicNavigationStartsSession(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-session-1", "push", `{}`)
	page := "/admin/deliveries?status=failed&limit=5"

	r := b.do(t, http.MethodGet, page, "", navigation(basic("x", token)))
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Equal(t, b.baseURL+page, r.header.Get("Location"), "absolute, so no userinfo is inherited")
	c := r.cookie(sessionCookie)
	require.NotNil(t, c, "Set-Cookie: %v", r.header.Values("Set-Cookie"))
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.Equal(t, "/", c.Path)
	require.Equal(t, int((12 * time.Hour).Seconds()), c.MaxAge)
	require.False(t, c.Secure, "plain HTTP here")

	// The redirect's target: the browser sends the cookie, and maybe its
	// cached Basic credentials too. A fresh session is not re-issued, or
	// the redirect would loop.
	r = b.do(t, http.MethodGet, page, "", cookieHeader(c))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = b.do(t, http.MethodGet, page, "", with(navigation(basic("x", token)), map[string]string{"Cookie": sessionCookie + "=" + c.Value}))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Nil(t, r.cookie(sessionCookie))

	// Only page loads with Basic start sessions: not a script's fetch, not
	// a bearer call. A browser without Sec-Fetch-* is told by Accept.
	for name, h := range map[string]map[string]string{
		"fetch":  {"Authorization": basic("x", token), "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Accept": "*/*"},
		"iframe": {"Authorization": basic("x", token), "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe", "Accept": "text/html"},
		"curl":   {"Authorization": basic("x", token), "Accept": "*/*"},
		"bearer": navigation("Bearer " + token),
	} {
		r := b.do(t, http.MethodGet, page, "", h)
		require.Equal(t, http.StatusOK, r.status, name)
		require.Nil(t, r.cookie(sessionCookie), name)
	}
	r = b.do(t, http.MethodGet, page, "", map[string]string{"Authorization": basic("x", token), "Accept": "text/html"})
	require.Equal(t, http.StatusSeeOther, r.status, "a browser without Sec-Fetch-*")

	// Cookie-authenticated state changes follow the cross-site rule.
	replay := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	r = b.do(t, http.MethodPost, replay, "", with(cookieHeader(c), crossSite()))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Equal(t, "cross_site_request", r.errorCode(t))
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	r = b.do(t, http.MethodPost, replay, "", with(cookieHeader(c), map[string]string{"Sec-Fetch-Site": "same-origin"}))
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)

	// A cookie that is not one of ours, or was signed under another token.
	other := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) { c.Token = "another-token" }})
	r = other.do(t, http.MethodGet, page, "", navigation(basic("x", "another-token")))
	foreign := r.cookie(sessionCookie)
	require.NotNil(t, foreign)
	// One character in the middle changed, which always changes the
	// decoded bytes. The last two replaced with "AA" could decode as
	// before (the last character carries padding bits, which the decoder
	// ignores): 200 about one run in a few hundred.
	tampered := *c
	mid, swap := len(c.Value)/2, "A"
	if c.Value[mid] == 'A' {
		swap = "B"
	}
	tampered.Value = c.Value[:mid] + swap + c.Value[mid+1:]
	require.NotEqual(t, c.Value, tampered.Value)
	for name, bad := range map[string]*http.Cookie{"other token": foreign, "tampered": &tampered, "garbage": {Name: sessionCookie, Value: "x"}} {
		r := b.do(t, http.MethodGet, page, "", cookieHeader(bad))
		require.Equal(t, http.StatusUnauthorized, r.status, name)
	}
}

func TestSessionExpires(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) { c.SessionTTL = time.Second }})
	c := b.do(t, http.MethodGet, "/admin/deliveries", "", navigation(basic("x", token))).cookie(sessionCookie)
	require.NotNil(t, c)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", cookieHeader(c)).status)
	require.Eventually(t, func() bool {
		return b.do(t, http.MethodGet, "/admin/deliveries", "", cookieHeader(c)).status == http.StatusUnauthorized
	}, 5*time.Second, 100*time.Millisecond)
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// GET /login is a form posting the token; a sign-in must come from our own
// origin. Signed in, the page carries the session's CSRF token, which lets
// a request through that cannot show its origin.
func TestLoginAndLogout(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-login-1", "push", `{}`)
	anonymous := map[string]string{"Authorization": ""}
	form := func(v url.Values) string { return v.Encode() }
	formType := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	sameOrigin := map[string]string{"Origin": b.baseURL, "Sec-Fetch-Site": "same-origin"}

	r := b.do(t, http.MethodGet, "/login?next=/riverui/queues", "", anonymous)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `name="token"`)
	require.Contains(t, string(r.body), `value="/riverui/queues"`)

	signIn := form(url.Values{"token": {token}, "next": {"/riverui/queues"}})
	r = b.do(t, http.MethodPost, "/login", signIn, with(with(anonymous, formType), crossSite()))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Equal(t, "cross_site_request", r.errorCode(t))
	require.Nil(t, r.cookie(sessionCookie))

	r = b.do(t, http.MethodPost, "/login", form(url.Values{"token": {"wrong"}}), with(with(anonymous, formType), sameOrigin))
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, string(r.body), "not an admin token")
	require.Empty(t, r.header.Values("WWW-Authenticate"), "no Basic prompt over the form")
	require.Nil(t, r.cookie(sessionCookie))

	r = b.do(t, http.MethodPost, "/login?"+signIn, "", with(anonymous, sameOrigin))
	require.Equal(t, http.StatusUnauthorized, r.status, "the token is read from the form, never the URL")
	r = b.do(t, http.MethodPost, "/login", signIn, with(with(anonymous, formType), sameOrigin))
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Equal(t, "/riverui/queues", r.header.Get("Location"))
	c := r.cookie(sessionCookie)
	require.NotNil(t, c)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", cookieHeader(c)).status)

	// next stays on this server.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "riverui"} {
		r := b.do(t, http.MethodPost, "/login", form(url.Values{"token": {token}, "next": {next}}), with(with(anonymous, formType), sameOrigin))
		require.Equal(t, "/console/", r.header.Get("Location"), "%q", next)
	}

	// Signed in: the page offers sign-out with the session's CSRF token.
	r = b.do(t, http.MethodGet, "/login", "", cookieHeader(c))
	require.Equal(t, http.StatusOK, r.status)
	m := csrfField.FindStringSubmatch(string(r.body))
	require.NotNil(t, m, "%s", r.body)
	csrf := m[1]

	// The token lets through a request that cannot show its origin (here
	// Origin: null, as with Referrer-Policy: no-referrer); another
	// session's token does not.
	replay := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	noOrigin := with(cookieHeader(c), map[string]string{"Origin": "null"})
	otherSession := b.do(t, http.MethodGet, "/admin/deliveries", "", navigation(basic("x", token))).cookie(sessionCookie)
	r = b.do(t, http.MethodGet, "/login", "", cookieHeader(otherSession))
	otherCSRF := csrfField.FindStringSubmatch(string(r.body))[1]
	require.NotEqual(t, csrf, otherCSRF)
	r = b.do(t, http.MethodPost, replay, "", with(noOrigin, map[string]string{"X-CSRF-Token": otherCSRF}))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	r = b.do(t, http.MethodPost, replay, "", with(noOrigin, map[string]string{"X-CSRF-Token": csrf}))
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)

	// Sign-out: refused cross-site without the token, done with it.
	r = b.do(t, http.MethodPost, "/logout", "", with(cookieHeader(c), crossSite()))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Nil(t, r.cookie(sessionCookie))
	r = b.do(t, http.MethodPost, "/logout", form(url.Values{"csrf_token": {csrf}}), with(with(cookieHeader(c), formType), crossSite()))
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	gone := r.cookie(sessionCookie)
	require.NotNil(t, gone)
	require.Empty(t, gone.Value)
	require.True(t, gone.Expires.Before(time.Now()), "the cookie is deleted: %v", gone)
}

// With no token there is nothing to sign in to.
func TestLoginWithoutToken(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) { c.Token = "" }})
	r := b.do(t, http.MethodGet, "/login?next=/riverui/queues", "", map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/riverui/queues", r.header.Get("Location"))
}

// A session does not make a wrong token beside it right: the request is
// refused, as a guess, and counts towards the address's sign-in limit.
func TestAWrongTokenBesideASessionIsAGuess(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	r := b.do(t, http.MethodGet, "/admin/deliveries", "", navigation(basic("x", token)))
	c := r.cookie(sessionCookie)
	require.NotNil(t, c)
	withCookie := func(auth string) map[string]string {
		return map[string]string{"Authorization": auth, "Cookie": c.Name + "=" + c.Value}
	}
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", withCookie("")).status)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", withCookie("Bearer "+token)).status)
	r = b.do(t, http.MethodGet, "/admin/deliveries", "", withCookie("Bearer not-the-token-at-all-0000"))
	require.Equal(t, http.StatusUnauthorized, r.status, "%s", r.body)
}
