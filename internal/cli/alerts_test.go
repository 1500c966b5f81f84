package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// An alert, end to end, with two replicas evaluating: a destination that
// fails opens a destination_failing alert, which reaches the chat
// destination once as a Slack message (and not the failing destination);
// its recovery resolves it, once.
func TestServeAlertsOnceWhenADestinationFailsAndRecovers(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		chat []string
	)
	chatSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		chat = append(chat, string(body))
		mu.Unlock()
	}))
	t.Cleanup(chatSrv.Close)
	var failing atomic.Bool
	failing.Store(true)
	var alertsToApp atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Hookinbox-Source") == "hookinbox" {
			alertsToApp.Add(1)
		}
		if failing.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(app.Close)

	dbURL := testdb.URL(t)
	b := setup(t, dbURL)
	// app keeps retrying for a minute, so it is still failing when the
	// alert opens and its first success after recovery resolves it.
	retries := strings.TrimSuffix(strings.Repeat("300ms, ", 200), ", ")
	cfg := fmt.Sprintf(`data_dir: %q
shutdown_timeout: 5s
sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
destinations:
  - {name: app, url: %q, retry: {schedule: [%s]}}
  - {name: chat, url: %q}
routes:
  - {source: github, events: ["*"], to: [app]}
alerts:
  to: [chat, app]
  transform: slack
  every: 1s
  rules:
    - destination_failing: {for: 1s}
`, filepath.Join(filepath.Dir(b.configPath), "data"), app.URL, retries, chatSrv.URL)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
	b.serve(t)
	// A second replica on the same database evaluates the same rules.
	replica := setup(t, dbURL)
	require.NoError(t, os.WriteFile(replica.configPath, []byte(cfg), 0o600))
	replica.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "issues", "--new-id")
	require.Equal(t, 0, code, out)

	messages := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), chat...)
	}
	require.Eventually(t, func() bool { return len(messages()) >= 1 }, 30*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	var opened struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(messages()[0]), &opened))
	require.Contains(t, opened.Text, "Destination app failing since")
	require.Contains(t, opened.Text, "HTTP 503")

	failing.Store(false)
	require.Eventually(t, func() bool { return len(messages()) >= 2 }, 30*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	time.Sleep(2 * time.Second) // a second opening or resolution would have come by now
	got := messages()
	require.Len(t, got, 2, "opened once, resolved once: %v", got)
	var resolved struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(got[1]), &resolved))
	require.Contains(t, resolved.Text, "Resolved: Destination app failing since")
	require.Zero(t, alertsToApp.Load(), "an alert about app is never sent to app")

	req, err := http.NewRequest(http.MethodGet, "http://"+b.adminAddr+"/console/alerts", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	require.Contains(t, string(page), "destination_failing")
	require.Contains(t, string(page), "resolved")
}
