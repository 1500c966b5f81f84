package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// pushRouteConfig routes GitHub pushes to url through filter.
func pushRouteConfig(dataDir, url, filter string) string {
	return fmt.Sprintf(`data_dir: %q
shutdown_timeout: 5s
sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
destinations:
  - {name: deploys, url: %q, secret: %q}
routes:
  - source: github
    events: ["push"]
    filter: %q
    to: [deploys]
`, dataDir, url, routesSecret, filter)
}

// serveStoppable runs `hookinbox serve` until stop is called, which waits
// for it to exit.
func (b *testBundle) serveStoppable(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--config", b.configPath}, b.env) }()
	b.waitReady(t, done)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			require.Equal(t, 0, code, "serve exit code; log:\n%s", b.stderr.String())
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop within 30s; log:\n%s", b.stderr.String())
		}
	}
	t.Cleanup(stop)
	return stop
}

func (b *testBundle) adminPost(t *testing.T, path, body string) (int, string) {
	t.Helper()
	return b.adminDo(t, http.MethodPost, path, adminToken, body, map[string]string{"Idempotency-Key": "retry-" + t.Name()})
}

// A route whose filter fails to evaluate (a typo in a field's name) makes
// the push's send fail while its delivery is processed. The delivery is
// found and marked wherever deliveries are listed: the API's filter, the
// CLI's table, the console's list and Overview. Once the route is fixed
// and the destination's failed sends retried, the lists are clean again.
func TestRouteThatFailsIsVisibleInEveryList(t *testing.T) {
	t.Parallel()
	recv := receiver.New(t, routesSecret)
	b := setup(t, testdb.URL(t))
	dataDir := t.TempDir()
	write := func(filter string) {
		require.NoError(t, os.WriteFile(b.configPath, []byte(pushRouteConfig(dataDir, recv.URL+"/webhooks", filter)), 0o600))
	}
	write(`body.repository.default_brnch == "main"`)
	stop := b.serveStoppable(t)

	code, out := b.send(t, "--source", "github", "--event", "push", "--new-id")
	require.Equal(t, 0, code, out)
	deliveryID := deliveryOf(t, out)
	const wantErr = "routes[0] (github): filter: no such key: default_brnch"

	type listed struct {
		Items []struct {
			ID          int64  `json:"id"`
			DeliveryID  string `json:"delivery_id"`
			Status      string `json:"status"`
			FailedSends []struct {
				Destination string `json:"destination"`
				Error       string `json:"error"`
			} `json:"failed_sends"`
		} `json:"items"`
	}
	list := func(query string) listed {
		t.Helper()
		status, body := b.adminGet(t, "/admin/deliveries"+query, true)
		require.Equal(t, http.StatusOK, status, body)
		var l listed
		require.NoError(t, json.Unmarshal([]byte(body), &l), body)
		return l
	}
	var failed listed
	require.Eventually(t, func() bool {
		failed = list("?send_status=failed")
		return len(failed.Items) == 1
	}, 30*time.Second, 20*time.Millisecond, "log:\n%s", b.stderr)
	d := failed.Items[0]
	require.Equal(t, deliveryID, d.DeliveryID)
	require.Equal(t, "processed", d.Status, "its handlers ran")
	require.Len(t, d.FailedSends, 1)
	require.Equal(t, "deploys", d.FailedSends[0].Destination)
	require.Equal(t, wantErr, d.FailedSends[0].Error)
	require.Len(t, list("?send_status=failed&destination=deploys").Items, 1)
	require.Empty(t, list("?send_status=failed&destination=elsewhere").Items)
	require.Len(t, list("").Items[0].FailedSends, 1, "the unfiltered list marks it too")

	cli := func(args ...string) string {
		t.Helper()
		out := &testlog.Buffer{}
		e := b.env
		e.stdout, e.stderr = out, out
		require.Equal(t, 0, run(context.Background(), append([]string{"deliveries", "--config", b.configPath}, args...), e), out.String())
		return out.String()
	}
	row := "processed, send failed  " + deliveryID + "  send to deploys failed: " + wantErr
	require.Contains(t, cli(), row)
	require.Contains(t, cli("--send-status", "failed"), row)
	require.Contains(t, cli("--send-status", "failed", "--destination", "deploys"), row)

	status, page := b.adminGet(t, "/console/deliveries?send_status=failed", true)
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, fmt.Sprintf(`<tr id="d%d" class="send-failed">`, d.ID))
	require.Contains(t, page, `<strong>deploys</strong>: <span class="error">`+wantErr+`</span>`)
	status, page = b.adminGet(t, "/console/", true)
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `<div class="big" id="failed-sends"><a href="/console/deliveries?send_status=failed">1</a></div>`)
	require.Contains(t, page, `<a href="/console/deliveries?send_status=failed&amp;destination=deploys">1</a>`)
	require.Contains(t, page, fmt.Sprintf(`<a href="/console/deliveries/%d">delivery %d</a>: <span class="error">%s</span>`, d.ID, d.ID, wantErr))

	// The fix is a new config; the retry evaluates the route as it is now.
	stop()
	write(`body.repository.default_branch == "main"`)
	b.serveStoppable(t)
	status, body := b.adminPost(t, "/admin/destinations/deploys/retry", `{"status":"failed"}`)
	require.Equal(t, http.StatusAccepted, status, body)
	require.Eventually(t, func() bool { return len(recv.Requests()) == 1 }, 30*time.Second, 20*time.Millisecond, "log:\n%s", b.stderr)
	require.Eventually(t, func() bool { return len(list("?send_status=failed").Items) == 0 }, 30*time.Second, 20*time.Millisecond)
	require.Empty(t, list("").Items[0].FailedSends)
	require.NotContains(t, cli(), "send failed")
	_, page = b.adminGet(t, "/console/", true)
	require.Contains(t, page, `<div class="big" id="failed-sends"><a href="/console/deliveries?send_status=failed">0</a></div>`)
	require.NotContains(t, page, "failed send, ")
}
