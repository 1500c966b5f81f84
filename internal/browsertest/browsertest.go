// Package browsertest runs Debian's Chromium, headless, for tests that
// look at pages as a person would: chromedp drives it over the DevTools
// protocol. Where no Chromium is installed the tests skip, except under
// HOOKINBOX_REQUIRE_BROWSER=1 (CI sets it in .ci/run), where they fail, so
// that a browser test cannot pass by being skipped.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path returns the path of a Chromium, or skips t where none is installed
// (apt-get install chromium); with HOOKINBOX_REQUIRE_BROWSER=1 it fails t
// instead.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("HOOKINBOX_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium on this machine, and HOOKINBOX_REQUIRE_BROWSER=1 requires one (apt-get install chromium)")
	}
	t.Skip("no Chromium on this machine")
	return ""
}

// Flags are the command-line flags every test's Chromium gets besides a
// fresh profile: headless, and (as root in a container) without the
// sandbox, the GPU, QUIC or any of its background traffic.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// New starts a Chromium with a fresh profile for t and returns a context
// whose tab chromedp drives. chromedp.NewContext(ctx) opens another tab of
// the same browser (sharing its cookies). Everything stops when t ends.
func New(t testing.TB) context.Context {
	t.Helper()
	path := Path(t)
	profile := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(profile),
		chromedp.Env("HOME=" + profile), chromedp.WindowSize(1280, 900), chromedp.NoSandbox, chromedp.DisableGPU}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f[2:], true))
	}
	// chromedp's defaults are Puppeteer's (no default-browser check,
	// no background throttling of an unseen tab, …).
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:], opts...)...)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// Start the browser now, so that a test's own timeouts measure pages.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

var (
	shotsOnce sync.Once
	shotsDir  string
	shotsErr  error
)

// Screenshot writes a PNG of the whole page to a folder under $TMPDIR
// that outlives the test (for a reviewer to look at) and logs its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	shotsOnce.Do(func() { shotsDir, shotsErr = os.MkdirTemp("", "hookinbox-screenshots-") })
	if shotsErr != nil {
		t.Fatalf("screenshot folder: %v", shotsErr)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(shotsDir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	t.Logf("screenshot: %s", path)
	return path
}
