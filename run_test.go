package hookinbox_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox"
	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// A program that owns its pool, listeners and logger hands them to Run:
// Run serves on them, processes with the program's handler, logs through
// its logger, and leaves the pool open for the program when it returns.
func TestRunWithTheCallersPoolListenersAndLogger(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg, err := config.Parse([]byte("sources: [{name: gh, provider: github, secrets: [s3cret]}]\n"), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	logs := &testlog.Buffer{}
	handled := make(chan string, 1)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- hookinbox.Run(ctx, cfg,
			hookinbox.WithPool(pool), hookinbox.WithListeners(ln, adminLn), hookinbox.WithRole("all"),
			hookinbox.WithLogger(slog.New(slog.NewTextHandler(logs, nil))),
			hookinbox.WithHandlers(func(r *handlers.Registry, _ hookinbox.Deps) error {
				return r.Register(handlers.Registration{Name: "test.stars", Provider: "github", Events: []string{"star"},
					Handler: handlers.HandlerFunc(func(_ context.Context, e *handlers.Event) error {
						handled <- e.DeliveryID
						return nil
					})})
			}))
	}()
	defer cancel()

	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "hookinbox ready") }, 30*time.Second, 50*time.Millisecond,
		"logs: %s", logs)
	body := []byte(`{"action":"created","repository":{"full_name":"o/r"}}`)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/webhooks/gh", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Delivery", "run-1")
	req.Header.Set("X-GitHub-Event", "star")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	select {
	case id := <-handled:
		require.Equal(t, "run-1", id)
	case <-time.After(30 * time.Second):
		t.Fatalf("the handler never ran; logs: %s", logs)
	}

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	require.NoError(t, pool.Ping(context.Background()), "the caller's pool stays open")
	_, err = net.Dial("tcp", ln.Addr().String())
	require.Error(t, err, "Run closed the listener it was given")
}

func TestRunRefusesAnUnknownRole(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse(nil, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	err = hookinbox.Run(context.Background(), cfg, hookinbox.WithRole("relay"))
	require.ErrorContains(t, err, `role "relay": want ingest, worker or all`)
}
