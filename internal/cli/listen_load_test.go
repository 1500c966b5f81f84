package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/verify"
)

// listenLoad is how many deliveries TestListenKeepsUpUnderLoad sends.
const listenLoad = 1000

// Deliveries posted into serve as fast as eight senders can go reach the
// app each once, in inbox id order. The log line gives the rates
// (docs/listen.md quotes them); nothing here asserts a time.
func TestListenKeepsUpUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends 1,000 deliveries")
	}
	b := setupListen(t)
	app := newTestApp(t)
	l := b.startListen(t, "--forward-to", app.url, "--source", "github")
	app.setSecret(b.listenSecretOf(t))
	signer, err := verify.NewSigner(verify.ProviderGitHub, productionSecrets["github"])
	require.NoError(t, err)
	body, err := samples.ReadFile("samples/github/push.json")
	require.NoError(t, err)

	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < listenLoad; i += 8 {
				// A body of its own: GitHub's signature does not cover
				// the delivery id, so the source takes the same body
				// under another id as a duplicate.
				own, err := setJSONField(body, "hookinbox_sample_nonce", i)
				if err != nil {
					t.Error(err)
					return
				}
				postSigned(t, signer, "http://"+b.listen+"/webhooks/github", fmt.Sprintf("00000000-0000-4000-8000-%012d", i), own)
			}
		}()
	}
	wg.Wait()
	sent := time.Since(start)
	got := app.waitFor(t, listenLoad, l.out)
	done := time.Since(start)

	requireEachOnceInOrder(t, got)
	t.Logf("live: %d deliveries accepted by serve in %s (%.0f/s); the last reached the app %s after the first was sent (%.0f/s end to end)",
		listenLoad, sent.Round(time.Millisecond), listenLoad/sent.Seconds(), done.Round(time.Millisecond), listenLoad/done.Seconds())
	l.stop(t)

	// The same deliveries from history: how fast listen catches up.
	behind := newTestApp(t)
	behind.setSecret(b.listenSecretOf(t))
	start = time.Now()
	l = b.startListen(t, "--forward-to", behind.url, "--source", "github", "--from", "1")
	got = behind.waitFor(t, listenLoad, l.out)
	requireEachOnceInOrder(t, got)
	took := time.Since(start)
	t.Logf("catching up: %d deliveries from history in %s (%.0f/s)", listenLoad, took.Round(time.Millisecond), listenLoad/took.Seconds())
}

func requireEachOnceInOrder(t *testing.T, got []appGot) {
	t.Helper()
	ids := map[string]bool{}
	inboxIDs := make([]int64, len(got))
	for i, g := range got {
		ids[g.header.Get("X-Github-Delivery")] = true
		inboxIDs[i] = g.inboxID
	}
	require.Len(t, got, listenLoad)
	require.Len(t, ids, listenLoad)
	require.IsIncreasing(t, inboxIDs)
}

// postSigned posts a delivery signed as GitHub signs it and requires 202.
func postSigned(t *testing.T, signer verify.Signer, url, id string, body []byte) {
	header, err := signer.Sign(body, verify.Message{ID: id, EventType: "push"}, time.Now())
	if err != nil {
		t.Error(err)
		return
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("delivery %s: %s", id, resp.Status)
	}
}
