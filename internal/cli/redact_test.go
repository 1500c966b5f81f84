package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A source's redact_headers reach ingest: the listed headers are neither
// stored nor shown by `hookinbox deliveries`.
func TestServeRedactsConfiguredHeaders(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	raw, err := os.ReadFile(b.configPath)
	require.NoError(t, err)
	const github = "    provider: github\n"
	require.Equal(t, 1, strings.Count(string(raw), github), "the committed config's github source moved")
	cfg := strings.Replace(string(raw), github, github+"    redact_headers: [x-proxy-secret]\n", 1)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
	b.serve(t)

	body := []byte(`{"action":"opened"}`)
	status := b.postRaw(t, "github", body, "gh-redact-1", "issues", "X-Proxy-Secret: proxy-s3cret", "X-Note: kept")
	require.Equal(t, http.StatusAccepted, status, "log:\n%s", b.stderr)

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var headers map[string][]string
	require.NoError(t, pool.QueryRow(context.Background(),
		"SELECT headers FROM delivery WHERE delivery_id = 'gh-redact-1'").Scan(&headers))
	require.Equal(t, []string{"kept"}, headers["X-Note"])
	require.NotContains(t, headers, "X-Proxy-Secret")

	code, out := b.run(t, "deliveries", "1")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "X-Note: kept")
	require.NotContains(t, out, "proxy-s3cret")
}

// A destination URL's path is its secret as often as its query is:
// Slack's ends in letters only, a self-made one may be short. Neither
// reaches an attempt, the admin API, the console, the log or an alert sent
// to another channel; the destination's name says which URL it is.
func TestServeMasksDestinationURLPaths(t *testing.T) {
	t.Parallel()
	chat := newChatReceiver(t)
	// Port 1: nothing listens there, so each request fails with Go's
	// error, which names the URL.
	const slack = "http://127.0.0.1:1/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx"
	const selfMade = "http://127.0.0.1:1/hooks/s3cr3t-t0ken"
	secrets := []string{"T0123ABCD", "B0123ABCD", "abcdefghijklmnopqrstuvwx", "s3cr3t-t0ken"}
	b := setup(t, testdb.URL(t))
	retries := strings.TrimSuffix(strings.Repeat("300ms, ", 200), ", ")
	cfg := fmt.Sprintf(`data_dir: %q
shutdown_timeout: 5s
sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
destinations:
  - {name: slack, url: %q, retry: {schedule: [%s]}, circuit: {failures: 1000}}
  - {name: selfmade, url: %q, retry: {schedule: [%s]}, circuit: {failures: 1000}}
  - {name: chat, url: %q}
routes:
  - {source: github, events: ["*"], to: [slack, selfmade]}
alerts:
  to: [chat]
  every: 1s
  rules:
    - destination_failing: {for: 1s}
`, filepath.Join(filepath.Dir(b.configPath), "data"), slack, retries, selfMade, retries, chat.url)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "issues", "--new-id")
	require.Equal(t, 0, code, out)

	alerted := chat.wait(t, b, 2)
	shown := map[string]string{"alerts": strings.Join(alerted, "\n")}
	require.Contains(t, shown["alerts"], "connection refused", "the alerts carry the error")
	require.Contains(t, shown["alerts"], "127.0.0.1:1/***/***/***/***")
	for _, path := range []string{"/admin/destinations", "/admin/deliveries/1", "/console/deliveries/1", "/console/"} {
		status, body := b.adminGet(t, path, true)
		require.Equal(t, http.StatusOK, status, path+": "+body)
		shown[path] = body
	}
	require.Contains(t, shown["/admin/destinations"], "127.0.0.1:1/***/***")
	require.Contains(t, shown["/admin/deliveries/1"], "127.0.0.1:1/***/***/***/***")
	code, out = b.run(t, "deliveries", "1")
	require.Equal(t, 0, code, out)
	shown["hookinbox deliveries 1"] = out
	shown["log"] = b.stderr.String()
	for where, text := range shown {
		for _, secret := range secrets {
			require.NotContains(t, text, secret, where)
		}
	}
}
