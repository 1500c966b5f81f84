package admin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
)

// The admin listener's route families, each as a rebinding page would
// call it.
var everyRouteFamily = []struct{ method, path string }{
	{http.MethodGet, "/"},
	{http.MethodGet, "/login"},
	{http.MethodPost, "/login"},
	{http.MethodPost, "/logout"},
	{http.MethodGet, "/admin/deliveries"},
	{http.MethodGet, "/admin/deliveries/stream"},
	{http.MethodGet, "/admin/deliveries/%d"},
	{http.MethodPost, "/admin/deliveries/%d/replay"},
	{http.MethodPost, "/admin/bulk-replays"},
	{http.MethodGet, "/admin/destinations"},
	{http.MethodPost, "/admin/destinations/app/pause"},
	{http.MethodPost, "/admin/sources/github/redeliver"},
	{http.MethodGet, "/console/"},
	{http.MethodGet, "/console/deliveries/%d"},
	{http.MethodGet, "/riverui/"},
	{http.MethodGet, "/riverui/api/jobs?state=available"},
	{http.MethodGet, "/metrics"},
	{http.MethodGet, "/debug/pprof/"},
}

// hostRequest sends what a page on host would: Host, a matching Origin,
// and the Sec-Fetch-Site a browser gives a page's own requests.
func (b *testBundle) hostRequest(t *testing.T, method, path, host string, bearer bool) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, b.baseURL+path, strings.NewReader(`{"status":"received"}`))
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Origin", "http://"+host)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "rebind-"+method+path)
	if bearer {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// DNS rebinding: a page on a name that resolves to the admin listener is
// same-origin with itself. Whatever it sends, with or without a token
// configured, a Host that is none of ours gets 421 on every route family,
// and nothing is read, done or stored.
func TestForeignHostRefusedOnEveryRoute(t *testing.T) {
	t.Parallel()
	for _, withToken := range []bool{false, true} {
		t.Run(fmt.Sprintf("token %v", withToken), func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, setupOpts{riverUI: true, cfg: func(c *admin.Config) {
				if !withToken {
					c.Token = ""
				}
				c.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "metrics") })
				c.Pprof = true
				c.Hosts = []string{"hookinbox-admin", "*.corp.example"}
			}})
			id := b.deliver(t, "github", "gh-rebind-1", "push", `{}`)
			port := b.baseURL[strings.LastIndex(b.baseURL, ":")+1:]

			for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port,
				"corp.example:" + port, "hookinbox-admin.evil.example:" + port, "127.0.0.1.nip.io:" + port} {
				for _, r := range everyRouteFamily {
					path := r.path
					if strings.Contains(path, "%d") {
						path = fmt.Sprintf(path, id)
					}
					status, body := b.hostRequest(t, r.method, path, host, withToken)
					require.Equal(t, http.StatusMisdirectedRequest, status, "%s %s Host %s: %s", r.method, path, host, body)
					if strings.HasPrefix(path, "/console/") {
						require.Contains(t, string(body), admin.CodeHostNotAllowed) // the console's error page
						continue
					}
					var e struct {
						Error struct{ Code, Message string }
					}
					require.NoError(t, json.Unmarshal(body, &e), string(body))
					require.Equal(t, admin.CodeHostNotAllowed, e.Error.Code)
					require.Contains(t, e.Error.Message, "admin.hosts")
				}
			}
			require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
			require.Zero(t, b.count(t, "SELECT count(*) FROM bulk_replay"))
			require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency"))

			// A probe that names the service still learns it is up.
			status, _ := b.hostRequest(t, http.MethodGet, "/healthz", "evil.example:"+port, false)
			require.Equal(t, http.StatusOK, status)

			// Our own names and every IP address are answered.
			for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port,
				"10.0.0.7:" + port, "hookinbox-admin:" + port, "admin.corp.example", "a.b.corp.example:" + port} {
				status, body := b.hostRequest(t, http.MethodGet, "/admin/deliveries", host, withToken)
				require.Equal(t, http.StatusOK, status, "Host %s: %s", host, body)
			}
		})
	}
}

// admin.hosts holds names, not URLs: a mistake is refused at start.
func TestHostsMustBeNames(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	for _, bad := range []string{"", "https://admin.example", "admin.example:8081", "*", "*.", "a.*.example", ".example", ".example.com",
		"example.com."} {
		_, err := admin.NewServer(admin.Config{Admin: config.Admin{Token: token, Listen: "127.0.0.1:0", Hosts: []string{bad}}, Pool: b.pool, River: b.river})
		require.ErrorContains(t, err, "admin.hosts[0]", bad)
	}
}

// "*.corp.example" is corp.example's subdomains, and nothing that merely
// ends or begins like them: a look-alike a rebinding page can register
// (evilcorp.example, xcorp.example, a name under another domain) gets
// 421, whatever its case, port or trailing dot, and so does corp.example
// itself. A subdomain is answered in any case and on any port.
func TestAWildcardHostAllowsItsSubdomainsOnly(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) {
		c.Hosts = []string{"*.Corp.Example"} // names are matched without case, as configured too
	}})
	port := b.baseURL[strings.LastIndex(b.baseURL, ":")+1:]
	for _, host := range []string{"evilcorp.example", "evilcorp.example:" + port, "EVILCORP.EXAMPLE", "evilcorp.example.",
		"xcorp.example", "xcorp.example:" + port, "a.xcorp.example", "corp.example", "CORP.EXAMPLE:" + port, "corp.example.",
		"corp.example.evil.com", "admin.corp.example.evil.com", "admin.corp.example.evil.com:" + port, "admin-corp.example",
		"admin.corp.examplex", "corp-example"} {
		status, body := b.hostRequest(t, http.MethodGet, "/admin/deliveries", host, true)
		require.Equal(t, http.StatusMisdirectedRequest, status, "Host %s: %s", host, body)
	}
	for _, host := range []string{"admin.corp.example", "admin.corp.example:" + port, "ADMIN.Corp.Example", "a.b.corp.example"} {
		status, body := b.hostRequest(t, http.MethodGet, "/admin/deliveries", host, true)
		require.Equal(t, http.StatusOK, status, "Host %s: %s", host, body)
	}
}

// The listen address's own name is ours: a listener configured on
// admin.internal answers a Host of admin.internal, in any case and on its
// port, without admin.hosts naming it, and nothing that merely begins so.
func TestTheListenAddressesNameIsAllowed(t *testing.T) {
	t.Parallel()
	var port string
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) {
		port = c.Listen[strings.LastIndex(c.Listen, ":")+1:]
		c.Listen = "admin.internal:" + port
	}})
	for _, host := range []string{"admin.internal:" + port, "admin.internal", "ADMIN.Internal:" + port} {
		status, body := b.hostRequest(t, http.MethodGet, "/admin/deliveries", host, true)
		require.Equal(t, http.StatusOK, status, "Host %s: %s", host, body)
	}
	for _, host := range []string{"admin.internal.evil.example:" + port, "internal:" + port} {
		status, body := b.hostRequest(t, http.MethodGet, "/admin/deliveries", host, true)
		require.Equal(t, http.StatusMisdirectedRequest, status, "Host %s: %s", host, body)
	}
}
