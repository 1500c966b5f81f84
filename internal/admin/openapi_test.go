package admin_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/admin/contract"
)

// The admin API's tests hold its answers to its OpenAPI document
// (openapi.yaml): every response a test's client (newClient) receives is
// validated against it (internal/admin/contract), and
// TestOpenAPIDocumentsEveryRoute holds the document's operations to the
// router's routes, both ways.

// newClient is the tests' client of the admin server: every response it
// receives is validated against the OpenAPI document (a response that
// breaks it fails t), and redirects, answers to check, are not followed.
func newClient(t testing.TB, transport http.RoundTripper) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: contract.Transport(t, transport, false),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// openAPIPath is a route's path as the document writes it: :name as
// {name}, and the router's * (the rest, slashes included) as {path}.
func openAPIPath(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		switch {
		case strings.HasPrefix(p, ":"):
			parts[i] = "{" + p[1:] + "}"
		case p == "*":
			parts[i] = "{path}"
		}
	}
	return strings.Join(parts, "/")
}

// Every route of the router is an operation of the document with the
// route's scope as x-scope, and every operation of the document is a
// route of the router. The one exclusion: CONNECT, which a route of
// every method answers and OpenAPI 3.1 has no operation for; it is
// checked too, so that it cannot outlive the routes it excuses.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	_, srv := setupScopes(t)
	c := contract.Must(t)
	declared := map[string]admin.RouteScope{}
	for _, r := range srv.DeclaredRoutes() {
		declared[r.Method+" "+r.Path] = r
	}
	routes := map[string]bool{}
	connects := 0
	for _, r := range srv.RouterRoutes() {
		key := r.Method + " " + r.Path
		d := declared[key]
		path := openAPIPath(r.Path)
		if r.Method == http.MethodConnect {
			require.Equal(t, "ALL", d.Declared, "%s: only a route of every method may answer CONNECT undocumented", key)
			connects++
			continue
		}
		item := c.T.Paths.Value(path)
		require.NotNil(t, item, "%s is a route; the document has no path %s", key, path)
		op := item.GetOperation(r.Method)
		require.NotNil(t, op, "%s is a route; the document's %s has no %s", key, path, strings.ToLower(r.Method))
		require.Equal(t, d.Scope.String(), op.Extensions["x-scope"], "%s: x-scope is the scope it is registered with", key)
		routes[r.Method+" "+path] = true
	}
	require.Positive(t, connects, "the CONNECT exclusion excuses no route any more: drop it")
	for path, item := range c.T.Paths.Map() {
		for method := range item.Operations() {
			require.True(t, routes[method+" "+path], "the document has %s %s; the router has no such route", method, path)
		}
	}
}

// The document is valid OpenAPI 3.1, served as it is built, and its
// Error schema's codes are the package's Code constants, no more.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	c := contract.Must(t)
	require.Equal(t, "3.1.0", c.T.OpenAPI)

	b := setup(t)
	r := b.do(t, http.MethodGet, "/admin/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	want, err := admin.OpenAPIDocument()
	require.NoError(t, err)
	require.Equal(t, string(want), string(r.body))
	require.Equal(t, http.StatusUnauthorized, b.do(t, http.MethodGet, "/admin/openapi.json", "", map[string]string{"Authorization": ""}).status)

	var codes []string
	for _, v := range c.T.Components.Schemas["Error"].Value.Properties["error"].Value.Properties["code"].Value.Enum {
		codes = append(codes, v.(string))
	}
	require.ElementsMatch(t, errorCodes(t), codes, "the Error schema's codes are the Code constants")
}

// errorCodes are the values of the package's exported Code constants.
func errorCodes(t *testing.T) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(gotoken.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	var codes []string
	for _, f := range pkgs["admin"].Files {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Code") || len(vs.Values) != 1 {
				return true
			}
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == gotoken.STRING {
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				codes = append(codes, s)
			}
			return true
		})
	}
	slices.Sort(codes)
	return codes
}

// The validation the tests' client runs catches an answer the document
// does not allow: a field renamed, an undocumented status, a code of
// another answer, a body that is not JSON.
func TestOpenAPIValidationCatchesADrift(t *testing.T) {
	t.Parallel()
	c := contract.Must(t)
	get := func(path string) *http.Request {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:8081"+path, nil)
		require.NoError(t, err)
		return req
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	replay := `{"replay_id":1,"id":2,"source":"github","delivery_id":"d","job_id":3,"job_state":"available","bulk_replay_id":null,"requested_at":"2026-12-01T00:00:00Z"}`
	require.NoError(t, c.CheckResponse(get("/admin/replays/1"), 200, jsonHeader, []byte(replay)))
	for name, tc := range map[string]struct {
		status int
		body   string
	}{
		"a field renamed":       {200, strings.Replace(replay, `"job_state"`, `"state"`, 1)},
		"a field missing":       {200, strings.Replace(replay, `"bulk_replay_id":null,`, ``, 1)},
		"an undocumented code":  {404, `{"error":{"code":"bad_request","message":"x"}}`},
		"an undocumented state": {409, `{"error":{"code":"request_in_progress","message":"x"}}`},
		"a body not JSON":       {200, `replay 1`},
	} {
		require.Error(t, c.CheckResponse(get("/admin/replays/1"), tc.status, jsonHeader, []byte(tc.body)), name)
	}
	require.NoError(t, c.CheckResponse(get("/admin/replays/1"), 404, jsonHeader, []byte(`{"error":{"code":"not_found","message":"x"}}`)))
	require.NoError(t, c.CheckResponse(get("/riverui/api/jobs"), 200, jsonHeader, []byte(`[]`)), "River UI's paths under its *")
	require.Error(t, c.CheckResponse(get("/console/"), 200, jsonHeader, []byte(`{}`)), "a page answered as JSON")
	require.Error(t, c.CheckResponse(get("/no/such/route"), 200, jsonHeader, []byte(`{}`)), "an answer from a route the document lacks")
	del, err := http.NewRequest(http.MethodDelete, "http://127.0.0.1:8081/admin/replays/1", nil)
	require.NoError(t, err)
	refused := []byte(`{"error":{"code":"bad_request","message":"x"}}`)
	require.NoError(t, c.CheckResponse(del, 405, http.Header{"Content-Type": {"application/json"}, "Allow": {"GET, HEAD"}}, refused))
	require.Error(t, c.CheckResponse(del, 405, jsonHeader, refused), "a 405 without Allow")
}

// The document handed out is the caller's to change: the next caller, and
// GET /admin/openapi.json, still get the document.
func TestOpenAPIDocumentIsACopy(t *testing.T) {
	t.Parallel()
	doc, err := admin.OpenAPIDocument()
	require.NoError(t, err)
	want := string(doc)
	clear(doc)
	again, err := admin.OpenAPIDocument()
	require.NoError(t, err)
	require.Equal(t, want, string(again))
}

// The answers the listener gives before any route's handler are the
// document's too, and are validated as any other: a method a known path
// does not have (405, with Allow), a body over the limit (413) and a
// Content-Encoding (415), on GETs and on public routes as on the API's
// POSTs.
func TestOpenAPIDocumentsTheRefusalsBeforeAHandler(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/admin/deliveries/5", "/admin/openapi.json"} {
		r := b.do(t, http.MethodDelete, path, "", nil)
		require.Equal(t, http.StatusMethodNotAllowed, r.status, "%s: %s", path, r.body)
		require.Equal(t, "bad_request", r.errorCode(t))
		require.Contains(t, r.header.Get("Allow"), http.MethodGet, path)
	}
	r := b.do(t, http.MethodPut, "/admin/openapi.json", "", nil)
	require.Equal(t, http.StatusMethodNotAllowed, r.status, "%s", r.body)

	gzipped := map[string]string{"Content-Encoding": "gzip"}
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/admin/deliveries"},
		{http.MethodGet, "/login"},
		{http.MethodPost, "/login"},
		{http.MethodPost, "/logout"},
		{http.MethodPost, "/admin/replays"},
	} {
		r := b.do(t, tc.method, tc.path, "x", gzipped)
		require.Equal(t, http.StatusUnsupportedMediaType, r.status, "%s %s: %s", tc.method, tc.path, r.body)
		require.Equal(t, "unsupported_media_type", r.errorCode(t))
	}
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/admin/deliveries"},
		{http.MethodGet, "/metrics"},
		{http.MethodPost, "/logout"},
	} {
		status, body := b.announceTooBig(t, tc.method, tc.path)
		require.Equal(t, http.StatusRequestEntityTooLarge, status, "%s %s: %.200s", tc.method, tc.path, body)
	}
}

// announceTooBig sends a body one byte over the admin limit. The listener
// refuses it from its announced length and closes the connection without
// reading the rest, so a client still writing may see a connection reset
// instead of the answer (docs/ingest.md, the body's size): such a try is
// made again, until the answer is read.
func (b *testBundle) announceTooBig(t *testing.T, method, path string) (int, []byte) {
	t.Helper()
	big := strings.Repeat("a", 1<<20+1)
	for try := 1; ; try++ {
		req, err := http.NewRequest(method, b.baseURL+path, strings.NewReader(big))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := b.client.Do(req)
		if err != nil && strings.Contains(err.Error(), "connection reset") && try < 20 {
			continue
		}
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}
}
