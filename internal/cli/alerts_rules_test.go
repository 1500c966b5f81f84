package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

// githubPushHandler is an extension with one handler of github's pushes.
func githubPushHandler(name string, handle handlers.HandlerFunc) Extensions {
	return Extensions{Handlers: []func(*handlers.Registry, Deps) error{func(r *handlers.Registry, _ Deps) error {
		return r.Register(handlers.Registration{Name: name, Source: "github", Events: []string{"push"},
			Ordering: handlers.EveryEvent, PayloadOnly: true, Handler: handle})
	}}}
}

// alertsConfig is a config with the github source and sources (each a
// flow mapping), the chat destination and alerts, evaluated every second,
// of rule sent to it as JSON events.
func alertsConfig(chat *chatReceiver, rule string, sources ...string) string {
	return fmt.Sprintf(`sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
%sdestinations:
  - {name: chat, url: %q}
alerts:
  to: [chat]
  every: 1s
  rules:
    - %s
`, listed(sources), chat.url, rule)
}

// listed is items as YAML list entries, one a line.
func listed(items []string) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString("  - " + it + "\n")
	}
	return b.String()
}

// retryFailedSends retries a destination's failed sends through the
// admin API, and requires that n were.
func retryFailedSends(t *testing.T, b *testBundle, destination string, n int) {
	t.Helper()
	status, body := b.adminDo(t, http.MethodPost, "/admin/destinations/"+destination+"/retry", adminToken, `{"status":"failed"}`, nil)
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	require.Contains(t, body, fmt.Sprintf(`"retried":%d`, n))
}

// openedThenResolved requires that the chat's first message has summary
// in it, and that the alert ("rule subject") is raised once while it
// holds; then it runs fix, and requires the alert resolved once.
func openedThenResolved(t *testing.T, b *testBundle, pool *pgxpool.Pool, chat *chatReceiver, alert, summary string, fix func()) {
	t.Helper()
	require.Contains(t, chat.wait(t, b, 1)[0], summary)
	settled(t, b, pool)
	require.Equal(t, []string{alert + ": opened"}, chat.history(t), "raised once while it holds")
	fix()
	chat.wait(t, b, 2)
	settled(t, b, pool)
	require.Equal(t, []string{alert + ": opened resolved"}, chat.history(t))
}

func sendPush(t *testing.T, b *testBundle) {
	t.Helper()
	code, out := b.send(t, "--source", "github", "--event", "push", "--new-id")
	require.Equal(t, 0, code, out)
}

// A delivery whose handler fails for good opens a deliveries_failed
// alert, once across two replicas; replaying it once the handler is fixed
// processes it, and that resolves the alert, once.
func TestServeAlertsOnceWhenADeliveryFailsAndIsReplayed(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	broken.Store(true)
	ext := githubPushHandler("test.orders", func(context.Context, *handlers.Event) error {
		if broken.Load() {
			return handlers.Permanent(errors.New("no order in the push"))
		}
		return nil
	})
	chat := newChatReceiver(t)
	b, pool := serveReplicas(t, alertsConfig(chat, "deliveries_failed: {min: 1}"), ext)
	sendPush(t, b)

	openedThenResolved(t, b, pool, chat, "deliveries_failed github", "1 github deliveries failed for good", func() {
		broken.Store(false)
		code, out := b.run(t, "replay", "--status", "failed", "--source", "github")
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "matched 1, enqueued 1, done 1")
	})
}

// A send to a receiver answering 500 that runs out of its retry schedule
// opens a sends_failed alert, once across two replicas, sent to chat and
// not to the failing destination; retrying the failed sends resolves it,
// once.
func TestServeAlertsOnceWhenSendsFailAndAreRetried(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	failing.Store(true)
	var alertsToApp, succeeded atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Hookinbox-Source") == "hookinbox":
			alertsToApp.Add(1)
		case failing.Load():
			http.Error(w, "internal error", http.StatusInternalServerError)
		default:
			succeeded.Add(1)
		}
	}))
	t.Cleanup(app.Close)
	chat := newChatReceiver(t)
	b, pool := serveReplicas(t, fmt.Sprintf(`sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
destinations:
  - {name: app, url: %q, retry: {schedule: [200ms]}}
  - {name: chat, url: %q}
routes:
  - {source: github, events: ["*"], to: [app]}
alerts:
  to: [chat, app]
  every: 1s
  rules:
    - sends_failed: {min: 1}
`, app.URL, chat.url), shipped)
	sendPush(t, b)

	require.Contains(t, chat.wait(t, b, 1)[0], "1 send(s) to app failed for good")
	settled(t, b, pool)
	require.Equal(t, []string{"sends_failed app: opened"}, chat.history(t), "raised once while it holds")
	failing.Store(false)
	retryFailedSends(t, b, "app", 1)
	chat.wait(t, b, 2)
	require.Eventually(t, func() bool { return succeeded.Load() == 1 }, 30*time.Second, 50*time.Millisecond,
		"the retried send reaches app; log:\n%s", b.stderr)
	settled(t, b, pool)
	require.Equal(t, []string{"sends_failed app: opened resolved"}, chat.history(t))
	require.Zero(t, alertsToApp.Load(), "an alert about app is never sent to app")
}

// A source no delivery has come from opens a source_silent alert, once
// across two replicas; a delivery resolves it at once, however short the
// silence, and the source stopping again opens a new one.
func TestServeAlertsOnceWhenASourceIsSilent(t *testing.T) {
	t.Parallel()
	chat := newChatReceiver(t)
	b, pool := serveReplicas(t, alertsConfig(chat, "source_silent: {source: github, for: 5s}"), Extensions{})

	require.Contains(t, chat.wait(t, b, 1)[0], "No delivery accepted from github for 00:00:05")
	settled(t, b, pool)
	require.Equal(t, []string{"source_silent github: opened"}, chat.history(t), "raised once while it holds")
	sendPush(t, b)
	chat.wait(t, b, 3) // resolved, then opened again 5s after the delivery
	settled(t, b, pool)
	require.Equal(t, []string{"source_silent github: opened resolved", "source_silent github: opened"}, chat.history(t))
}

// Deliveries piling up behind a stuck handler open a backlog alert, once
// across two replicas, sent while they wait; once the handler is unstuck
// they are processed, and that resolves it, once.
func TestServeAlertsOnceWhenDeliveriesBackUp(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ext := githubPushHandler("test.stuck", func(ctx context.Context, _ *handlers.Event) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	chat := newChatReceiver(t)
	// Two workers a replica: the stuck handler holds all four, and two
	// more deliveries wait in the deliveries queue. The alert must not
	// wait behind them.
	b, pool := serveReplicas(t, alertsConfig(chat, "backlog: {over: 2, for: 1s}")+"jobs: {batch_size: 1, max_workers: 2}\n", ext)
	unstick := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unstick) // before the replicas stop
	for range 6 {
		sendPush(t, b)
	}

	openedThenResolved(t, b, pool, chat, "backlog deliveries", "deliveries wait to be processed", unstick)
	var waiting int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM inbox_pending").Scan(&waiting))
	require.Zero(t, waiting)
}
