package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The River UI really renders: headless Chromium loads the queue list and
// the page shows hookinbox's queue. Skipped where Chromium is not installed
// (apt-get install chromium).
func TestRiverUIRendersInChromium(t *testing.T) {
	t.Parallel()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium on this machine")
	}
	// No token: allowed on loopback, and spares the browser an auth prompt
	// (auth itself is tested over plain HTTP).
	b := setupEnv(t, testdb.URL(t), map[string]string{"HOOKINBOX_ADMIN_TOKEN": ""})
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)

	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--virtual-time-budget=15000", "--dump-dom",
		"http://"+b.adminAddr+"/riverui/queues")
	cmd.Env = append(os.Environ(), "HOME="+profile)
	dom, err := cmd.Output()
	require.NoError(t, err)
	// The shell HTML names no queue: this is the rendered table.
	require.Contains(t, string(dom), ">deliveries</a>", "the queue list shows hookinbox's queue")
}
