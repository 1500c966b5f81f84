package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// The production secrets of the repository's hookinbox.yaml, which serve
// verifies with and listen must not sign with.
var productionSecrets = map[string]string{
	"github":  "dev-github-secret",
	"stripe":  "whsec_dev_stripe_secret",
	"billing": "whsec_ZGV2LWJpbGxpbmctc2VjcmV0LWRvLW5vdC11c2U=",
}

// appGot is a request the test app accepted.
type appGot struct {
	inboxID int64
	source  string
	header  http.Header
	body    []byte
	at      time.Time
}

// testApp is a developer's app: a real HTTP server that verifies each
// request with its provider's own library and the secret listen printed,
// as the app's production code would with the provider's.
type testApp struct {
	t      *testing.T
	url    string
	mu     sync.Mutex
	secret string
	got    []appGot
	// answer, when set, decides a request's fate before it is verified:
	// a status to answer (0: verify and accept).
	answer func(n int, r *http.Request) int
	n      int
}

func newTestApp(t *testing.T) *testApp {
	a := &testApp{t: t}
	srv := httptest.NewServer(http.HandlerFunc(a.serveHTTP))
	t.Cleanup(srv.Close)
	a.url = srv.URL + "/webhooks"
	return a
}

func (a *testApp) serveHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.n++
	n, answer, secret := a.n, a.answer, a.secret
	a.mu.Unlock()
	if answer != nil {
		if status := answer(n, r); status != 0 {
			w.WriteHeader(status)
			return
		}
	}
	source := r.Header.Get("Hookinbox-Source")
	body, err := verifyAsProvider(r, source, secret)
	if err != nil {
		a.t.Errorf("app: %s delivery %s: %v", source, r.Header.Get("Hookinbox-Delivery-Id"), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	// The production secret must not verify it: listen signs with the
	// local one only.
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	if _, err := verifyAsProvider(r, source, productionSecrets[source]); err == nil {
		a.t.Errorf("app: %s delivery verifies with the production secret", source)
	}
	id, _ := strconv.ParseInt(r.Header.Get("Hookinbox-Inbox-Id"), 10, 64)
	a.mu.Lock()
	a.got = append(a.got, appGot{inboxID: id, source: source, header: r.Header.Clone(), body: body, at: time.Now()})
	a.mu.Unlock()
}

// verifyAsProvider checks the request as the provider's own library does
// and returns the body.
func verifyAsProvider(r *http.Request, source, secret string) ([]byte, error) {
	switch source {
	case "github":
		return github.ValidatePayload(r, []byte(secret))
	case "stripe":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		return body, webhook.ValidatePayload(body, r.Header.Get("Stripe-Signature"), secret)
	case "billing":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return nil, err
		}
		return body, wh.Verify(body, r.Header)
	}
	return nil, fmt.Errorf("no verifier for source %q", source)
}

func (a *testApp) setSecret(s string) { a.mu.Lock(); a.secret = s; a.mu.Unlock() }

func (a *testApp) received() []appGot {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]appGot(nil), a.got...)
}

// waitFor waits until the app has accepted n requests.
func (a *testApp) waitFor(t *testing.T, n int, log fmt.Stringer) []appGot {
	t.Helper()
	require.Eventually(t, func() bool { return len(a.received()) >= n }, 60*time.Second, 20*time.Millisecond,
		"the app got %d of %d; listen:\n%s", len(a.received()), n, log)
	return a.received()
}

// listening is a `hookinbox listen` running in the test's process.
type listening struct {
	out    *testlog.Buffer
	cancel context.CancelFunc
	code   chan int
}

// startListen runs `hookinbox listen` with args until the test ends or stop,
// and waits for it to be ready.
func (b *testBundle) startListen(t *testing.T, args ...string) *listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listening{out: &testlog.Buffer{}, cancel: cancel, code: make(chan int, 1)}
	e := b.env
	e.stdout, e.stderr = l.out, l.out
	go func() { l.code <- run(ctx, append([]string{"listen", "--config", b.configPath}, args...), e) }()
	t.Cleanup(cancel)
	require.Eventually(t, func() bool {
		select {
		case code := <-l.code:
			t.Fatalf("listen exited with %d before ready:\n%s", code, l.out)
		default:
		}
		return strings.Contains(l.out.String(), "ready: Ctrl-C to stop")
	}, 30*time.Second, 10*time.Millisecond, "listen:\n%s", l.out)
	return l
}

// stop waits for listen to exit, after ctx was cancelled, and requires
// exit code 0.
func (l *listening) stop(t *testing.T) {
	t.Helper()
	l.cancel()
	l.exited(t)
}

// exited waits for listen to end, which something else has made it do.
func (l *listening) exited(t *testing.T) {
	t.Helper()
	select {
	case code := <-l.code:
		require.Equal(t, 0, code, "listen:\n%s", l.out)
	case <-time.After(30 * time.Second):
		t.Fatalf("listen did not stop:\n%s", l.out)
	}
}

// setupListen starts serve and returns the bundle, with a config
// directory of the test's own for listen's secret and cursors.
func setupListen(t *testing.T) *testBundle {
	t.Helper()
	b := setupEnv(t, testdb.URL(t), map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	b.serve(t)
	return b
}

func (b *testBundle) sendOK(t *testing.T, args ...string) {
	t.Helper()
	code, out := b.send(t, args...)
	require.Equal(t, 0, code, out)
}

// listenSecretOf is the development secret listen made, as stored.
func (b *testBundle) listenSecretOf(t *testing.T) string {
	t.Helper()
	dir, _ := b.env.lookup("XDG_CONFIG_HOME")
	path := filepath.Join(dir, "hookinbox", "listen-secret")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	return strings.TrimSpace(string(raw))
}

// GitHub, Stripe and Standard Webhooks deliveries reach the app as their
// providers send them, each verified by the provider's own library with
// the development secret listen printed, and with the production secret
// not; the body is the stored body byte for byte. An app that fails a
// delivery is told about in its line, and the stream goes on.
func TestListenForwardsReSignedDeliveries(t *testing.T) {
	t.Parallel()
	b := setupListen(t)
	app := newTestApp(t)
	app.answer = func(n int, r *http.Request) int {
		if r.Header.Get("X-Github-Event") == "issues" {
			return http.StatusInternalServerError
		}
		return 0
	}
	l := b.startListen(t, "--forward-to", app.url)
	secret := b.listenSecretOf(t)
	require.Contains(t, l.out.String(), "signing secret "+secret+" (from ")
	require.Contains(t, l.out.String(), "forwarding github (github), stripe (stripe), billing (standard) to "+app.url)
	app.setSecret(secret)

	b.sendOK(t, "--source", "github", "--event", "issues", "--new-id")
	b.sendOK(t, "--source", "github", "--event", "push", "--new-id")
	b.sendOK(t, "--source", "stripe", "--event", "payment_intent.succeeded", "--new-id")
	b.sendOK(t, "--source", "billing", "--event", "invoice.paid", "--new-id")
	got := app.waitFor(t, 3, l.out)
	// The app keeps a request before it answers; listen prints the line
	// once the answer is in, and a listen stopped before that sends the
	// delivery again next time instead.
	billing := regexp.MustCompile(`(?m)  billing  invoice\.paid  msg_\w+  -> 200 OK`)
	require.Eventually(t, func() bool { return billing.MatchString(l.out.String()) }, 30*time.Second, 10*time.Millisecond,
		"listen:\n%s", l.out)
	l.stop(t)

	require.Equal(t, []string{"github", "stripe", "billing"}, []string{got[0].source, got[1].source, got[2].source})
	for _, g := range got {
		status, raw := b.adminGet(t, fmt.Sprintf("/admin/deliveries/%d", g.inboxID), true)
		require.Equal(t, http.StatusOK, status, raw)
		var d admin.DeliveryDetail
		require.NoError(t, json.Unmarshal([]byte(raw), &d))
		require.Equal(t, d.Payload, string(g.body), "%s: the body as stored", g.source)
		require.Equal(t, d.DeliveryID, g.header.Get("Hookinbox-Delivery-Id"))
		require.Equal(t, d.EventType, g.header.Get("Hookinbox-Event"))
		require.Equal(t, http.Header(d.Headers).Get("Content-Type"), g.header.Get("Content-Type"), "%s: as the provider sent it", g.source)
	}
	gh := got[0].header
	require.Equal(t, "push", gh.Get("X-Github-Event"))
	require.Equal(t, gh.Get("Hookinbox-Delivery-Id"), gh.Get("X-Github-Delivery"))
	require.Equal(t, got[2].header.Get("Hookinbox-Delivery-Id"), got[2].header.Get("Webhook-Id"))

	out := l.out.String()
	line := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  #\d+  github  push  [0-9a-f-]{36}  -> 200 OK  \d+ ms$`)
	require.Regexp(t, line, out)
	require.Regexp(t, `(?m)  github  issues  [0-9a-f-]{36}  -> 500 Internal Server Error \(not sent again\)  \d+ ms$`, out)
	require.Regexp(t, `(?m)  stripe  payment_intent\.succeeded  evt_\w+  -> 200 OK`, out)
}

// A listen killed while the app holds a delivery, started again, sends
// that delivery and every one after it, those accepted while it was down
// too, and none twice; a source not followed sends nothing.
func TestListenResumesWhereItStopped(t *testing.T) {
	t.Parallel()
	b := setupListen(t)
	app := newTestApp(t)
	var running atomic.Pointer[listening]
	app.answer = func(n int, r *http.Request) int {
		if n != 3 {
			return 0
		}
		running.Load().cancel() // killed while the app holds the third
		// Read the body so the server watches the connection and ends
		// r's context when listen drops it.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
			t.Error("listen, stopped, kept the request open")
		}
		return http.StatusServiceUnavailable // nobody reads it
	}
	first := b.startListen(t, "--forward-to", app.url, "--source", "github")
	running.Store(first)
	app.setSecret(b.listenSecretOf(t))
	for i := 0; i < 5; i++ {
		b.sendOK(t, "--source", "github", "--event", "push", "--new-id")
	}
	b.sendOK(t, "--source", "stripe", "--event", "payment_intent.succeeded", "--new-id")
	first.exited(t) // killed by the app, as it holds the third
	for i := 0; i < 3; i++ {
		b.sendOK(t, "--source", "github", "--event", "push", "--new-id")
	}

	second := b.startListen(t, "--forward-to", app.url, "--source", "github")
	saved := regexp.MustCompile(`continuing after delivery 2 \(cursor in (.*listen-cursors/[0-9a-f]+\.json)\)`).FindStringSubmatch(second.out.String())
	require.NotNil(t, saved, second.out.String())
	got := app.waitFor(t, 8, second.out)
	ids := map[string]bool{}
	var inboxIDs []int64
	for _, g := range got {
		require.Equal(t, "github", g.source)
		ids[g.header.Get("X-Github-Delivery")] = true
		inboxIDs = append(inboxIDs, g.inboxID)
	}
	require.Len(t, ids, 8, "every delivery once: %v", inboxIDs)
	require.Len(t, got, 8, "none twice: %v", inboxIDs)
	require.IsIncreasing(t, inboxIDs)
	second.stop(t)

	// --from replays history: the fourth delivery and those after it.
	third := b.startListen(t, "--forward-to", app.url, "--source", "github", "--from", strconv.FormatInt(inboxIDs[3], 10))
	require.Contains(t, third.out.String(), fmt.Sprintf("starting at delivery %d", inboxIDs[3]))
	again := app.waitFor(t, 8+5, third.out)[8:]
	require.Equal(t, inboxIDs[3:], []int64{again[0].inboxID, again[1].inboxID, again[2].inboxID, again[3].inboxID, again[4].inboxID})
	third.stop(t)

	// A saved cursor past every id of the inbox is from a database since
	// reset: listen starts now.
	require.NoError(t, os.WriteFile(saved[1], []byte(`{"after": 1000000}`), 0o600))
	fourth := b.startListen(t, "--forward-to", app.url, "--source", "github")
	require.Contains(t, fourth.out.String(), "the saved cursor (after delivery 1000000) is past every delivery this inbox has stored: "+
		"a database since reset? starting now")
	fourth.stop(t)
}
