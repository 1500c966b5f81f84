package cli

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// withTokens adds admin.tokens, as docs/admin.md shows them, to the
// config serve reads; their values come from the environment.
func (b *testBundle) withTokens(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(b.configPath)
	require.NoError(t, err)
	line := "  token: \"${HOOKINBOX_ADMIN_TOKEN}\""
	require.Contains(t, string(raw), line)
	cfg := strings.Replace(string(raw), line, line+`
  tokens:
    - { name: laptops, token: "${HOOKINBOX_READ_TOKEN}", scope: read }
    - { name: oncall,  token: "${HOOKINBOX_OPS_TOKEN}",  scope: operate }`, 1)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
}

// serve takes admin.tokens from the config: each token acts within its
// scope, and the audit log names it.
func TestServeHonoursTokenScopes(t *testing.T) {
	t.Parallel()
	const readToken, opsToken = "cmd-test-read-token-laptops", "cmd-test-ops-token-oncall"
	b := setupEnv(t, testdb.URL(t), map[string]string{"HOOKINBOX_READ_TOKEN": readToken, "HOOKINBOX_OPS_TOKEN": opsToken})
	b.withTokens(t)
	b.serve(t)

	require.Equal(t, http.StatusOK, b.adminStatus(t, http.MethodGet, "/admin/deliveries", readToken, ""))
	require.Equal(t, http.StatusForbidden, b.adminStatus(t, http.MethodPost, "/admin/bulk-replays", readToken, `{"status":"failed"}`))
	require.Equal(t, http.StatusAccepted, b.adminStatus(t, http.MethodPost, "/admin/bulk-replays", opsToken, `{"status":"failed"}`))
	require.Equal(t, http.StatusForbidden, b.adminStatus(t, http.MethodGet, "/riverui/", opsToken, ""))
	require.Equal(t, http.StatusOK, b.adminStatus(t, http.MethodGet, "/riverui/", adminToken, ""))
	require.Eventually(t, func() bool {
		return strings.Contains(b.stderr.String(), `token=oncall via=bearer method=POST path=/admin/bulk-replays status=202`)
	}, 5*time.Second, 50*time.Millisecond, "%s", b.stderr.String())
	for _, tok := range []string{adminToken, readToken, opsToken} {
		require.NotContains(t, b.stderr.String(), tok)
	}
}

// A weak named token stops serve, as a weak admin.token does, naming its
// key and never the token.
func TestServeRefusesAWeakNamedToken(t *testing.T) {
	t.Parallel()
	b := setupEnv(t, testdb.URL(t), map[string]string{"HOOKINBOX_READ_TOKEN": "change-me-please-now", "HOOKINBOX_OPS_TOKEN": "cmd-test-ops-token-oncall"})
	b.withTokens(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.Equal(t, 1, run(ctx, []string{"serve", "--config", b.configPath}, b.env))
	out := b.stderr.String()
	require.Contains(t, out, "admin.tokens[0] (laptops).token is a placeholder")
	require.NotContains(t, out, "change-me-please-now")
}
