package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin/contract"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// get fetches an admin URL, with the token unless auth is false.
func (b *testBundle) adminGet(t *testing.T, path string, auth bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+b.adminAddr+path, nil)
	require.NoError(t, err)
	if auth {
		req.SetBasicAuth("ops", adminToken)
	}
	return adminSend(t, req)
}

// adminSend sends req and returns its answer.
func adminSend(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// adminDo sends a request to the admin listener with token as Bearer and
// a JSON body, plus header.
func (b *testBundle) adminDo(t *testing.T, method, path, token, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+b.adminAddr+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return adminSend(t, req)
}

// adminStatus is adminDo's status.
func (b *testBundle) adminStatus(t *testing.T, method, path, token, body string) int {
	t.Helper()
	status, _ := b.adminDo(t, method, path, token, body, nil)
	return status
}

func TestServeAdminMetricsAndRiverUI(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.URL(t))
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)

	status, body := b.adminGet(t, "/admin/deliveries", true)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"event_type":"issues"`)

	require.Eventually(t, func() bool {
		_, body = b.adminGet(t, "/metrics", true)
		return strings.Contains(body, `hookinbox_handler_runs_total{event_type="issues",outcome="processed"} 1`)
	}, 10*time.Second, 50*time.Millisecond, "metrics:\n%s", body)
	for _, want := range []string{
		`hookinbox_deliveries_total{outcome="accepted",source="github"} 1`,
		`hookinbox_ingest_request_duration_seconds_count{outcome="accepted",source="github"} 1`,
		`hookinbox_inbox_rows{status="processed"}`,
		`hookinbox_oldest_unprocessed_delivery_age_seconds 0`,
		`hookinbox_river_jobs{queue="deliveries",state="completed"} 1`,
		`hookinbox_table_size_bytes{table="inbox"}`,
		`hookinbox_table_oldest_row_age_seconds{table="api_idempotency"} 0`,
		`hookinbox_db_scrape_error 0`,
	} {
		require.Contains(t, body, want)
	}

	// The River UI, behind the same auth.
	status, body = b.adminGet(t, "/riverui/", true)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "<html")
	status, body = b.adminGet(t, "/riverui/api/queues", true)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"name":"deliveries"`)
	for _, path := range []string{"/riverui/", "/riverui/api/queues", "/metrics", "/admin/deliveries"} {
		status, _ = b.adminGet(t, path, false)
		require.Equal(t, http.StatusUnauthorized, status, path)
	}
}

// run executes a command with the bundle's config and returns its exit
// code and output.
func (b *testBundle) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out := &testlog.Buffer{}
	e := b.env
	e.stdout, e.stderr = out, out
	code := run(context.Background(), append(args, "--config", b.configPath), e)
	return code, out.String()
}

func TestDeliveriesAndReplayCommands(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.URL(t))
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)

	code, out = b.run(t, "deliveries")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^ID\s+RECEIVED\s+SOURCE\s+EVENT\s+STATUS`, out)
	require.Regexp(t, `(?m)^1\s+\S+ \S+\s+github\s+issues\s+`, out)

	code, out = b.run(t, "deliveries", "1")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^delivery 1\s+github issues, (received|processed)$`, out)
	require.Regexp(t, `(?m)^delivery id\s+[0-9a-f-]{36}$`, out)
	require.Contains(t, out, "\nheaders\n  Accept-Encoding: gzip\n")
	require.Contains(t, out, "\n  Content-Type: application/json\n")
	require.Contains(t, out, "\n  X-Github-Event: issues\n")
	require.Contains(t, out, "\npayload\n  {\n    \"action\": \"opened\",\n")
	require.Regexp(t, `(?m)^attempts\n\s+JOB\s+STATE\s+ATTEMPT`, out)
	require.Contains(t, out, "\ndownstream keys\n  none\n")

	code, out = b.run(t, "deliveries", "1", "--json")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `"attempts": [`)

	code, out = b.run(t, "replay", "1")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `^replay 1: delivery 1 \(github \S+\) queued as job \d+\n$`, out)
	code, out = b.run(t, "replay", "1", "--json")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `"replay_id": 2`)

	code, out = b.run(t, "replay", "--source", "github", "--event-type", "issues")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `bulk replay 1: finished, matched 1, enqueued 1, done 1\n$`, out)

	code, out = b.run(t, "deliveries", "--status", "exploded")
	require.Equal(t, 1, code, out, "an unknown status filter is refused, not an empty list")
	require.Contains(t, out, "status must be one of received, processed, skipped, failed")
	code, out = b.run(t, "deliveries", "--since", "yesterday")
	require.Equal(t, 1, code)
	require.Contains(t, out, "400 Bad Request")
}

// The built binary, run outside the repository, needs no config file to
// reach the admin API: flags or the environment give the URL and token.
func TestAdminCommandsWithoutConfigFile(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.URL(t))
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)

	// Tests run in cmd/hookinbox, where the default ./hookinbox.yaml is
	// missing, as it is for a binary run outside a checkout.
	_, err := os.Stat(config.DefaultPath)
	require.ErrorIs(t, err, os.ErrNotExist)
	runIn := func(vars map[string]string, args ...string) (int, string) {
		out := &testlog.Buffer{}
		e := env{stdout: out, stderr: out, lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
			adminTransport: contract.Transport(t, nil, true)}
		return run(context.Background(), args, e), out.String()
	}
	missing := filepath.Join(t.TempDir(), "hookinbox.yaml")

	code, out = runIn(nil, "deliveries", "--config", missing)
	require.Equal(t, 1, code, "a named config must exist")
	require.Contains(t, out, "no such file or directory")

	adminURL := "http://" + b.adminAddr
	code, out = runIn(nil, "deliveries", "--admin-url", adminURL, "--admin-token", adminToken)
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^1\s+\S+ \S+\s+github\s+issues\s+`, out)

	vars := map[string]string{"HOOKINBOX_ADMIN_URL": adminURL, "HOOKINBOX_ADMIN_TOKEN": adminToken}
	code, out = runIn(vars, "deliveries", "1")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "X-Github-Event")
	code, out = runIn(vars, "replay", "1", "--json")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `"replay_id": 1`)

	code, out = runIn(map[string]string{"HOOKINBOX_ADMIN_URL": adminURL, "HOOKINBOX_ADMIN_TOKEN": "wrong"}, "deliveries")
	require.Equal(t, 1, code)
	require.Contains(t, out, "GET /admin/deliveries: 401 Unauthorized", "the path as asked, no stray ?")

	// healthcheck reads only listen, so it too works without the file.
	code, out = runIn(map[string]string{"HOOKINBOX_LISTEN": b.listen}, "healthcheck", "--ready")
	require.Equal(t, 0, code, out)
}
