package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

const routesSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// routesConfig is examples/routes.yaml's route, sending to url.
func routesConfig(dataDir, url string) string {
	return fmt.Sprintf(`data_dir: %q
shutdown_timeout: 5s
sources:
  - {name: github, provider: github, secrets: [dev-github-secret]}
destinations:
  - {name: chat-bugs, url: %q, secret: %q}
routes:
  - source: github
    events: ["issues"]
    filter: 'body.action in ["opened", "reopened"] && body.issue.labels.exists(l, l.name == "bug")'
    transform: '{"text": "Bug: " + body.issue.title + " " + body.issue.html_url}'
    to: [chat-bugs]
`, dataDir, url, routesSecret)
}

func (b *testBundle) routesTest(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out := &testlog.Buffer{}
	e := b.env
	e.stdout, e.stderr = out, out
	code := run(context.Background(), append([]string{"routes", "test", "--config", b.configPath}, args...), e)
	return code, out.String()
}

// routes test says what each destination would get, through the same
// evaluation as serve, and fails when a route cannot be evaluated.
func TestRoutesTest(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	require.NoError(t, os.WriteFile(b.configPath, []byte(routesConfig(t.TempDir(), "http://127.0.0.1:1/x")), 0o600))
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		return path
	}

	code, out := b.routesTest(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "chat-bugs  route 0  sends  application/json")
	require.Contains(t, out, `{"text":"Bug: Checkout shows 0.00 for JPY orders https://github.com/acme/webshop/issues/42"}`)

	code, out = b.routesTest(t, "--source", "github", "--event", "issues",
		"--file", write("enhancement.json", `{"action":"opened","issue":{"title":"x","labels":[{"name":"enhancement"}]}}`))
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "chat-bugs  -  filtered out")

	code, out = b.routesTest(t, "--source", "github", "--event", "issues", "--file", write("no-issue.json", `{"action":"opened"}`))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "chat-bugs  route 0  ERROR  routes[0] (github): filter: no such key: issue")

	code, out = b.routesTest(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "no route sends github push events anywhere")
}

// A real serve routes GitHub issues through the filter and the transform
// to a real receiver, which verifies the signature over the body it got.
func TestServeFiltersAndTransformsRoutes(t *testing.T) {
	t.Parallel()
	recv := receiver.New(t, routesSecret)
	b := setup(t, testdb.URL(t))
	require.NoError(t, os.WriteFile(b.configPath, []byte(routesConfig(t.TempDir(), recv.URL+"/webhooks")), 0o600))
	b.serve(t)

	enhancement := filepath.Join(t.TempDir(), "enhancement.json")
	require.NoError(t, os.WriteFile(enhancement, []byte(`{"action":"opened","issue":{"number":7,"title":"x","labels":[{"name":"enhancement"}]}}`), 0o600))
	code, out := b.send(t, "--source", "github", "--event", "issues", "--file", enhancement)
	require.Equal(t, 0, code, out)
	code, out = b.send(t, "--source", "github", "--event", "issues", "--new-id")
	require.Equal(t, 0, code, out)
	deliveryID := deliveryOf(t, out)

	require.Eventually(t, func() bool { return len(recv.Requests()) >= 1 }, 30*time.Second, 20*time.Millisecond, "log:\n%s", b.stderr)
	time.Sleep(300 * time.Millisecond) // the filtered delivery would have been sent by now
	reqs := recv.Requests()
	require.Len(t, reqs, 1, "only the issue labelled bug")
	require.True(t, reqs[0].Verified, "signed over the transformed body")
	require.Equal(t, destination.Key("github", deliveryID, "chat-bugs"), reqs[0].WebhookID)
	require.JSONEq(t, `{"text":"Bug: Checkout shows 0.00 for JPY orders https://github.com/acme/webshop/issues/42"}`, string(reqs[0].Body))
}

// deliveryOf is the delivery id send printed.
func deliveryOf(t *testing.T, sent string) string {
	t.Helper()
	m := regexp.MustCompile(`\(delivery ([^)]+)\)`).FindStringSubmatch(sent)
	require.NotNil(t, m, sent)
	return m[1]
}
