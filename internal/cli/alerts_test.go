package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/alerts"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// serveReplicas runs two serve replicas on one fresh database, each with
// config (plus a data_dir and shutdown_timeout of its own) and ext's
// handlers, so that an alert raised once is raised once across processes.
// It returns the first replica and a pool on the database.
func serveReplicas(t *testing.T, config string, ext Extensions) (*testBundle, *pgxpool.Pool) {
	t.Helper()
	dbURL := testdb.URL(t)
	var first *testBundle
	for range 2 {
		b := setup(t, dbURL)
		b.env.ext = ext
		cfg := fmt.Sprintf("data_dir: %q\nshutdown_timeout: 5s\n%s", filepath.Join(filepath.Dir(b.configPath), "data"), config)
		require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
		b.serve(t)
		if first == nil {
			first = b
		}
	}
	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return first, pool
}

// chatReceiver is the chat webhook alerts are sent to: it keeps every body
// posted to it.
type chatReceiver struct {
	url    string
	mu     sync.Mutex
	bodies []string
}

func newChatReceiver(t *testing.T) *chatReceiver {
	c := &chatReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies = append(c.bodies, string(body))
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func (c *chatReceiver) messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bodies)
}

// wait waits until the chat has n messages or more, and returns them.
func (c *chatReceiver) wait(t *testing.T, b *testBundle, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(c.messages()) >= n }, 30*time.Second, 50*time.Millisecond,
		"%d chat message(s) of %d: %v; log:\n%s", len(c.messages()), n, c.messages(), b.stderr)
	return c.messages()
}

// history is the chat's messages as alert events (alerts.transform
// unset): per alert, in the order of their ids, "rule subject:" and the
// events it got, each as often as it came, openings first.
func (c *chatReceiver) history(t *testing.T) []string {
	t.Helper()
	var ids []int64
	events := map[int64][]string{}
	for _, m := range c.messages() {
		var a alerts.Alert
		require.NoError(t, json.Unmarshal([]byte(m), &a), m)
		head := a.Rule + " " + a.Subject + ":"
		if _, ok := events[a.ID]; !ok {
			ids = append(ids, a.ID)
			events[a.ID] = []string{head}
		}
		require.Equal(t, head, events[a.ID][0], "alert %d", a.ID)
		events[a.ID] = append(events[a.ID], strings.TrimPrefix(a.Type, "hookinbox.alert."))
	}
	slices.Sort(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		kinds := events[id][1:]
		slices.Sort(kinds) // opened before resolved
		out[i] = strings.Join(append(events[id][:1], kinds...), " ")
	}
	return out
}

// settled waits until alerts have been evaluated twice since it was called
// and every alert recorded has been sent, so that an alert raised or
// resolved twice would have reached the chat by then.
func settled(t *testing.T, b *testBundle, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var mark time.Time
	require.NoError(t, pool.QueryRow(ctx, "SELECT now()").Scan(&mark))
	require.Eventually(t, func() bool {
		var evaluations, unsent int
		require.NoError(t, pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM river_job WHERE kind = 'alerts_evaluate' AND state = 'completed' AND finalized_at > $1),
			(SELECT count(*) FROM inbox_pending WHERE source = 'hookinbox')
			+ (SELECT count(*) FROM destination_send WHERE source = 'hookinbox' AND state IN ('waiting', 'pending', 'held'))`,
			mark).Scan(&evaluations, &unsent))
		return evaluations >= 2 && unsent == 0
	}, 30*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
}

// An alert, end to end, with two replicas evaluating: a destination that
// fails opens a destination_failing alert, which reaches the chat
// destination once as a Slack message (and not the failing destination);
// its recovery resolves it, once.
func TestServeAlertsOnceWhenADestinationFailsAndRecovers(t *testing.T) {
	t.Parallel()
	chat := newChatReceiver(t)
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

	// app keeps retrying for a minute, so it is still failing when the
	// alert opens and its first success after recovery resolves it; its
	// circuit stays closed, so that success is the next retry, not a probe
	// up to 30 s later.
	retries := strings.TrimSuffix(strings.Repeat("300ms, ", 200), ", ")
	b, pool := serveReplicas(t, fmt.Sprintf(`sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
destinations:
  - {name: app, url: %q, retry: {schedule: [%s]}, circuit: {failures: 1000}}
  - {name: chat, url: %q}
routes:
  - {source: github, events: ["*"], to: [app]}
alerts:
  to: [chat, app]
  transform: slack
  every: 1s
  rules:
    - destination_failing: {for: 1s}
`, app.URL, retries, chat.url), shipped)
	code, out := b.send(t, "--source", "github", "--event", "issues", "--new-id")
	require.Equal(t, 0, code, out)

	var opened struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(chat.wait(t, b, 1)[0]), &opened))
	require.Contains(t, opened.Text, "Destination app failing since")
	require.Contains(t, opened.Text, "HTTP 503")
	settled(t, b, pool)
	require.Len(t, chat.messages(), 1, "raised once while it holds")

	failing.Store(false)
	chat.wait(t, b, 2)
	settled(t, b, pool)
	got := chat.messages()
	require.Len(t, got, 2, "opened once, resolved once: %v", got)
	var resolved struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(got[1]), &resolved))
	require.Contains(t, resolved.Text, "Resolved: Destination app failing since")
	require.Zero(t, alertsToApp.Load(), "an alert about app is never sent to app")

	status, page := b.adminGet(t, "/console/alerts", true)
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "destination_failing")
	require.Contains(t, page, "resolved")
}
