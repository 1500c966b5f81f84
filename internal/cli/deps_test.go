package cli

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
)

// The client handed to handlers follows no redirect: a handler that calls
// its downstream with it gets the 3xx, and the Location's host gets
// nothing of the request, its headers included.
func TestDepsHTTPClientFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	var landed atomic.Int64
	landing := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { landed.Add(1) }))
	t.Cleanup(landing.Close)
	srv := httptest.NewServer(http.RedirectHandler(landing.URL+"/login", http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)

	var deps Deps
	ext := Extensions{Handlers: []func(*handlers.Registry, Deps) error{func(_ *handlers.Registry, d Deps) error {
		deps = d
		return nil
	}}}
	var cfg config.Config
	cfg.Downstream.Timeout = config.Duration(5 * time.Second)
	_, _, err := buildRegistry(cfg, nil, slog.New(slog.DiscardHandler), ext, nil)
	require.NoError(t, err)
	require.NotNil(t, deps.HTTPClient)

	req, err := http.NewRequest(http.MethodPost, srv.URL+"/fulfill", strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", "downstream-key")
	resp, err := deps.HTTPClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	require.Zero(t, landed.Load())
}

// `send` shows a redirect instead of following it: the signature (and a
// GitLab secret token) never reach the host the Location names.
func TestSendFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	var landed atomic.Int64
	landing := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { landed.Add(1) }))
	t.Cleanup(landing.Close)
	srv := httptest.NewServer(http.RedirectHandler(landing.URL+"/login", http.StatusFound))
	t.Cleanup(srv.Close)

	b := setup(t, "")
	code, out := b.send(t, "--source", "github", "--event", "push", "--url", srv.URL+"/webhooks/github")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "302 Found")
	require.Zero(t, landed.Load())
}
