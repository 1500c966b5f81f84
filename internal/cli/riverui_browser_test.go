package cli

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/browsertest"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// chromium returns the path of a Chromium, or skips the test where none
// is installed (browsertest.Path: under HOOKINBOX_REQUIRE_BROWSER=1 it
// fails instead).
func chromium(t *testing.T) string { return browsertest.Path(t) }

// renderedDOM loads url in headless Chromium with a fresh profile and
// returns the DOM once the page's scripts have run.
func renderedDOM(t *testing.T, url string) string {
	t.Helper()
	browser := chromium(t)
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append(slices.Clone(browsertest.Flags), "--user-data-dir="+profile, "--virtual-time-budget=15000", "--dump-dom", url)
	cmd := exec.CommandContext(ctx, browser, args...)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	dom, err := cmd.Output()
	require.NoError(t, err)
	return string(dom)
}

// The River UI really renders: headless Chromium loads the queue list and
// the page shows hookinbox's queue.
func TestRiverUIRendersInChromium(t *testing.T) {
	t.Parallel()
	chromium(t)
	// No token: allowed on loopback, and spares the browser an auth prompt.
	b := setupEnv(t, testdb.URL(t), map[string]string{"HOOKINBOX_ADMIN_TOKEN": ""})
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	// The shell HTML names no queue: this is the rendered table.
	require.Contains(t, renderedDOM(t, "http://"+b.adminAddr+"/riverui/queues"), ">deliveries</a>",
		"the queue list shows hookinbox's queue")
}

// With the token in the URL (http://x:TOKEN@host/riverui/), the page's
// fetch() calls fail while the document's URL holds credentials. The
// Basic-authenticated navigation starts a cookie session and redirects to
// the URL without them, so the page loads from a clean URL and renders.
func TestRiverUIWithCredentialsInURLRendersInChromium(t *testing.T) {
	t.Parallel()
	chromium(t)
	b := setup(t, testdb.URL(t))
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	dom := renderedDOM(t, "http://x:"+adminToken+"@"+b.adminAddr+"/riverui/queues")
	require.Contains(t, dom, ">deliveries</a>", "the queue list shows hookinbox's queue")
}
