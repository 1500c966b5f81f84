package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testlog"
)

// Commands that only call a running serve read the addresses they use
// and nothing else: a source whose secret's variable is set only in the
// server's environment stops serve, not them. healthcheck --wait probes
// until the answer is 200, within its bound, and says the last answer
// when it gives up.
func TestClientCommandsNeedNotTheServersSecrets(t *testing.T) {
	t.Parallel()
	var probes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && probes.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	path := filepath.Join(dir, "hookinbox.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`listen: "`+strings.TrimPrefix(srv.URL, "http://")+`"
database_url: "postgres://app@127.0.0.1:5/app"
sources:
  - name: shop
    provider: shopify
    secrets: ["${SHOP_SECRET_ONLY_ON_THE_SERVER}"]
`), 0o600))
	runWith := func(args ...string) (int, string) {
		out := &testlog.Buffer{}
		e := env{stdout: out, stderr: out, lookup: func(string) (string, bool) { return "", false }}
		return run(context.Background(), append(args, "--config", path), e), out.String()
	}

	code, out := runWith("db-url", "--force")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "postgres://app@127.0.0.1:5/app")

	code, out = runWith("healthcheck")
	require.Equal(t, 0, code, out)
	code, out = runWith("healthcheck", "--ready")
	require.Equal(t, 1, code, "the first probe answers 503")
	require.Contains(t, out, "/readyz answered 503")
	code, out = runWith("healthcheck", "--ready", "--wait", "10s")
	require.Equal(t, 0, code, out)
	require.EqualValues(t, 3, probes.Load())

	srv.Close()
	start := time.Now()
	code, out = runWith("healthcheck", "--ready", "--wait", "1500ms")
	require.Equal(t, 1, code)
	require.Contains(t, out, "not ready after 1.5s")
	require.Less(t, time.Since(start), 5*time.Second)

	code, out = runWith("serve")
	require.Equal(t, 1, code)
	require.Contains(t, out, "sources[0] (shop).secrets: no non-empty secret")
}
