package ingest_test

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestObserveReportsEveryOutcome(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	b := setupWith(t, setupOpts{observe: func(source, outcome string, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, source+"/"+outcome)
	}})
	body := githubBody(60)
	h := githubHeaders(t, githubSecret, "gh-observe", body)
	b.post(t, "/webhooks/github", body, h)
	b.post(t, "/webhooks/github", body, h)
	other := githubBody(61)
	b.post(t, "/webhooks/github", other, githubHeaders(t, githubSecret, "gh-observe", other))
	b.post(t, "/webhooks/github", body, githubHeaders(t, "wrong", "gh-observe-2", body))
	b.post(t, "/webhooks/made-up-name", body, h)
	// The server answers 413 and closes while the client may still be
	// sending, so the client can see a reset instead of the answer; the
	// observation is what this test checks.
	req, err := http.NewRequest(http.MethodPost, b.baseURL+"/webhooks/github", bytes.NewReader(bytes.Repeat([]byte("x"), maxBody+1)))
	require.NoError(t, err)
	req.Header = h
	if resp, err := b.client.Do(req); err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	}

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{
		"github/accepted", "github/duplicate", "github/conflict", "github/invalid_signature",
		"_unknown/unknown_source", "github/payload_too_large",
	}, seen)
}
