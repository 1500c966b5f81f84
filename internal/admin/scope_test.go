package admin_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/admin/contract"
	"github.com/hookinbox/hookinbox/internal/config"
)

// The named tokens of the scope tests, beside token (admin.token).
const (
	readToken    = "test-read-token-laptops"
	operateToken = "test-operate-token-oncall"
)

var namedTokens = []config.AdminToken{
	{Name: "laptops", Token: readToken, Scope: "read"},
	{Name: "oncall", Token: operateToken, Scope: "operate"},
}

// setupScopes serves every route there is (River UI, pprof, metrics)
// with the named tokens beside admin.token.
func setupScopes(t *testing.T) (*testBundle, *admin.Server) {
	t.Helper()
	var srv *admin.Server
	b := setupWith(t, setupOpts{noWorker: true, riverUI: true, server: &srv, cfg: func(c *admin.Config) {
		c.Tokens = namedTokens
		c.Pprof = true
		c.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up 1\n") })
	}})
	return b, srv
}

// A caller of the scope tests: no token, or a token of one scope.
type caller struct {
	name  string
	auth  string
	scope admin.Scope // admin.ScopePublic: no token
}

var callers = []caller{
	{"no token", "", admin.ScopePublic},
	{"read", "Bearer " + readToken, admin.ScopeRead},
	{"operate", "Bearer " + operateToken, admin.ScopeOperate},
	{"admin", "Bearer " + token, admin.ScopeAdmin},
}

// Every route the router holds was declared with a scope, and every route
// declared is in the router: a route registered without Server.route
// fails here. Then each route is called with no token and with a token of
// each scope: below the route's scope the answer is 401 (no token) or 403
// insufficient_scope, at or above it neither.
func TestEveryRouteChecksItsScope(t *testing.T) {
	t.Parallel()
	b, srv := setupScopes(t)
	declared := map[string]admin.Scope{}
	for _, r := range srv.DeclaredRoutes() {
		declared[r.Method+" "+r.Path] = r.Scope
	}
	var routes []string
	for _, r := range srv.RouterRoutes() {
		key := r.Method + " " + r.Path
		_, ok := declared[key]
		require.True(t, ok, "%s is in the router without a declared scope: register it with Server.route", key)
		routes = append(routes, key)
	}
	for key := range declared {
		require.Contains(t, routes, key, "declared but not in the router")
	}
	require.Greater(t, len(routes), 60, "every route, River UI's, pprof and metrics included")

	for _, key := range routes {
		need := declared[key]
		method, path, _ := strings.Cut(key, " ")
		for _, c := range callers {
			status, code := rawDo(t, b, method, samplePath(path), c.auth)
			what := fmt.Sprintf("%s (scope %s) as %s: %d %s", key, need, c.name, status, code)
			refused := status == http.StatusForbidden && (method == http.MethodHead || code == admin.CodeInsufficientScope)
			switch {
			case need == admin.ScopePublic:
				require.False(t, status == http.StatusUnauthorized || refused, what)
			case c.scope == admin.ScopePublic:
				require.Equal(t, http.StatusUnauthorized, status, what)
			case c.scope < need:
				require.True(t, refused, what)
			default:
				require.False(t, status == http.StatusUnauthorized || refused, what)
			}
		}
	}
}

// samplePath fills a route's parameters with values each route takes.
func samplePath(path string) string {
	return regexp.MustCompile(`:\w+|\*`).ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case ":id":
			return "1"
		case ":file":
			return "console.css"
		case ":action":
			return "pause"
		case "*":
			// Not "": /riverui/ is /riverui's route too (Fiber ignores a
			// trailing slash), and each route is to answer for itself.
			return "sample"
		}
		return "x"
	})
}

// rawDo sends one request as written, any method (CONNECT and TRACE
// included, which http.Client treats apart), and returns its status and
// error code.
func rawDo(t *testing.T, b *testBundle, method, path, auth string) (int, string) {
	t.Helper()
	host := strings.TrimPrefix(b.baseURL, "http://")
	conn, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n", method, path, host)
	if auth != "" {
		req += "Authorization: " + auth + "\r\n"
	}
	_, err = io.WriteString(conn, req+"\r\n")
	require.NoError(t, err)
	readAs := http.MethodGet // the body runs to the close
	if method == http.MethodHead {
		readAs = method
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: readAs})
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: body}
	if method != http.MethodConnect { // OpenAPI has no CONNECT (TestOpenAPIDocumentsEveryRoute)
		sent, err := http.NewRequest(method, b.baseURL+path, nil)
		require.NoError(t, err)
		require.NoError(t, contract.Must(t).CheckResponse(sent, r.status, r.header, body), "%s %s answered %d: %s", method, path, r.status, body)
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case len(body) == 0:
		return r.status, ""
	case strings.HasPrefix(ct, "application/json"):
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		r.json(t, &e)
		return r.status, e.Error.Code
	case strings.HasPrefix(ct, "text/html"): // a console page's error
		if m := pageErrorCode.FindSubmatch(body); m != nil {
			return r.status, string(m[1])
		}
	}
	return r.status, ""
}

var pageErrorCode = regexp.MustCompile(`id="error-message"><code>([a-z_]+)</code>`)

// The refusal names the scope needed and the token's, in the API's error
// shape, and nothing happens.
func TestInsufficientScopeAnswer(t *testing.T) {
	t.Parallel()
	b, _ := setupScopes(t)
	id := b.deliver(t, "github", "gh-scope-1", "push", `{}`)
	replay := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	r := b.do(t, http.MethodPost, replay, "", map[string]string{"Authorization": "Bearer " + readToken, "Idempotency-Key": "scope-1"})
	require.Equal(t, http.StatusForbidden, r.status)
	require.JSONEq(t, `{"error":{"code":"insufficient_scope","message":"this route needs scope operate; token laptops has read"}}`, string(r.body))
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency"), "a refused request claims no key")

	r = b.do(t, http.MethodGet, "/riverui/", "", map[string]string{"Authorization": "Bearer " + operateToken})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Equal(t, "this route needs scope admin; token oncall has operate", errorMessage(t, r))

	r = b.do(t, http.MethodPost, replay, "", map[string]string{"Authorization": "Bearer " + operateToken})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
}

func errorMessage(t *testing.T, r response) string {
	t.Helper()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	r.json(t, &e)
	return e.Error.Message
}

// docs/admin.md's table of scopes lists every route with the scope it is
// declared with, and no other.
func TestDocsListEveryRoutesScope(t *testing.T) {
	t.Parallel()
	_, srv := setupScopes(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "admin.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(raw), "\n## Scopes\n")
	require.True(t, ok, "docs/admin.md has a Scopes section")
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]string{}
	routeRE := regexp.MustCompile("`([A-Z]+) (/[^`]*)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| ") {
			continue
		}
		scope := strings.Trim(strings.TrimSpace(cells[2]), "*")
		for _, m := range routeRE.FindAllStringSubmatch(cells[1], -1) {
			documented[m[1]+" "+m[2]] = scope
		}
	}
	declared := map[string]string{}
	for _, r := range srv.DeclaredRoutes() {
		method := strings.Replace(r.Declared, "ALL", "ANY", 1)
		path := regexp.MustCompile(`:(\w+)`).ReplaceAllString(r.Path, "{$1}")
		declared[method+" "+path] = r.Scope.String()
	}
	require.Equal(t, declared, documented)
}
