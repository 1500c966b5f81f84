package admin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
)

// Every answer of the admin listener forbids framing: pages, the API,
// River UI's pages, assets and API, redirects, and every error and
// refusal (401, 403, 404, 421, 429), so no other site can overlay a
// signed-in operator's clicks.
func TestEveryAnswerForbidsFraming(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{riverUI: true, cfg: func(c *admin.Config) {
		c.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "metrics") })
		c.Pprof = true
		c.SignIn.Burst, c.SignIn.Every = 1, config.Duration(time.Hour)
	}})
	id := b.deliver(t, "github", "gh-frame-1", "push", `{}`)
	port := b.baseURL[strings.LastIndex(b.baseURL, ":")+1:]

	requireNoFraming := func(r response, what string) {
		t.Helper()
		require.Equal(t, "DENY", r.header.Get("X-Frame-Options"), what)
		policies := r.header.Values("Content-Security-Policy")
		require.NotEmpty(t, policies, what)
		for _, p := range policies {
			require.Contains(t, p, "frame-ancestors 'none'", what)
		}
	}
	anonymous := map[string]string{"Authorization": ""}
	seen := map[int]bool{}
	check := func(method, path string, header map[string]string) {
		t.Helper()
		r := b.do(t, method, path, "", header)
		seen[r.status] = true
		requireNoFraming(r, fmt.Sprintf("%s %s: %d", method, path, r.status))
	}

	routes := append([]struct{ method, path string }{
		{http.MethodGet, "/healthz"},
		{http.MethodGet, "/readyz"},
		{http.MethodGet, "/console/deliveries"},
		{http.MethodGet, "/console/conflicts"},
		{http.MethodGet, "/console/alerts"},
		{http.MethodGet, "/console/bulk-replays/new"},
		{http.MethodGet, "/console/static/console.css"},
		{http.MethodGet, "/riverui/queues"},
		{http.MethodGet, "/riverui/api/queues"},
		{http.MethodGet, "/no/such/route"},
		{http.MethodGet, "/console/no-such-page"},
		{http.MethodGet, "/admin/deliveries/999999"},
	}, everyRouteFamily...)
	for _, r := range routes {
		path := r.path
		if strings.Contains(path, "%d") {
			path = fmt.Sprintf(path, id)
		}
		check(r.method, path, nil)
		check(r.method, path, anonymous)
		check(r.method, path, crossSite())
	}
	// River UI's own assets, as its page names them.
	page := b.do(t, http.MethodGet, "/riverui/", "", nil)
	assets := 0
	for _, m := range strings.Split(string(page.body), `"/riverui/assets/`)[1:] {
		check(http.MethodGet, "/riverui/assets/"+m[:strings.IndexAny(m, `"'`)], nil)
		assets++
	}
	require.Positive(t, assets, "River UI's page names its assets: %s", page.body)

	// A foreign Host, and an address out of sign-in tries.
	req := func(host string) response {
		r, err := http.NewRequest(http.MethodGet, b.baseURL+"/login", nil)
		require.NoError(t, err)
		r.Host = host
		resp, err := b.client.Do(r)
		require.NoError(t, err)
		resp.Body.Close()
		return response{status: resp.StatusCode, header: resp.Header}
	}
	r := req("evil.example:" + port)
	seen[r.status] = true
	requireNoFraming(r, "foreign Host")
	b.do(t, http.MethodGet, "/admin/deliveries", "", map[string]string{"Authorization": "Bearer wrong-guess"})
	check(http.MethodGet, "/admin/deliveries", map[string]string{"Authorization": "Bearer wrong-guess"})
	check(http.MethodPost, "/login", map[string]string{"Authorization": "", "Origin": b.baseURL, "Sec-Fetch-Site": "same-origin",
		"Content-Type": "application/x-www-form-urlencoded"})

	for _, status := range []int{200, 303, 401, 403, 404, 421, 429} {
		require.True(t, seen[status], "no answer with status %d was checked: %v", status, seen)
	}
}
