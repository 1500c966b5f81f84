// Package testproc runs a program under test as a child process: a built
// hookinbox (or a program built on it) serving until the test ends.
package testproc

import (
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/testlog"
)

// Start runs cmd until t ends, then stops it as Ctrl-C would (SIGINT, then
// a kill after 30 s) and, if t failed, logs its output. It returns the
// output as it grows.
func Start(t testing.TB, cmd *exec.Cmd) *testlog.Buffer {
	t.Helper()
	out := &testlog.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("testproc: start %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("testproc: %s exited: %v", cmd.Path, err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("testproc: %s did not stop within 30s", cmd.Path)
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", cmd.Path, out)
		}
	})
	return out
}

// WaitReady polls url until it answers 200, for up to timeout.
func WaitReady(t testing.TB, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("testproc: %s not ready after %s", url, timeout)
}
