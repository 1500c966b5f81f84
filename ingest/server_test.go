package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/verify"
)

const (
	githubSecret    = "gh-current-secret"
	githubOldSecret = "gh-old-secret"
	stripeSecret    = "whsec_stripe_test_secret"
	standardSecret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // base64 of 24 random bytes
	maxBody         = 64 << 10
)

type testBundle struct {
	addr    string
	pool    *pgxpool.Pool
	baseURL string
	client  *http.Client
}

type setupOpts struct {
	pool         *pgxpool.Pool // defaults to a fresh test database
	readTimeout  time.Duration
	maxBody      int // defaults to maxBody
	perAddress   int // MaxConnectionsPerAddress; 0: the default
	observe      func(source, outcome string, d time.Duration)
	observeBatch func(n int)
	batchWindow  time.Duration
	batchRunners int
	logger       *slog.Logger
	rejectEvery  time.Duration
	linesPerSec  int
	accepting    func() error
	ready        func(ctx context.Context) error // defaults to pinging the pool
	sources      []ingest.Source                 // besides github, stripe and billing
	handOff      *inbox.HandOff                  // the Inbox's HandOff
}

// modes are the two ways ingest commits: one transaction per request, and
// batched. Every behaviour of the response table must hold in both.
var modes = []struct {
	name string
	opts setupOpts
}{
	{"per_request", setupOpts{}},
	{"batched", setupOpts{batchWindow: 2 * time.Millisecond}},
}

// forModes runs f once per commit mode, as parallel subtests.
func forModes(t *testing.T, f func(t *testing.T, opts setupOpts)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			f(t, m.opts)
		})
	}
}

func setup(t *testing.T) *testBundle { return setupWith(t, setupOpts{}) }

func setupWith(t *testing.T, opts setupOpts) *testBundle {
	t.Helper()
	pool := opts.pool
	if pool == nil {
		pool = testdb.New(t)
	}
	river, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	if opts.maxBody == 0 {
		opts.maxBody = maxBody
	}
	ready := opts.ready
	if ready == nil {
		ready = func(ctx context.Context) error { return pool.Ping(ctx) }
	}

	// Zero is a window too: one transaction per request.
	window := config.Duration(opts.batchWindow)
	in := ingest.NewInbox(pool, river)
	in.HandOff = opts.handOff
	srv, err := ingest.NewServer(ingest.Config{
		Sources: append([]ingest.Source{
			source(t, "github", verify.ProviderGitHub, githubSecret, githubOldSecret),
			source(t, "stripe", verify.ProviderStripe, stripeSecret),
			source(t, "billing", verify.ProviderStandard, standardSecret),
		}, opts.sources...),
		Inbox:        in,
		Ready:        ready,
		MaxBodyBytes: opts.maxBody,
		StoreTimeout: 3 * time.Second,
		ReadTimeout:  opts.readTimeout,
		Observe:      opts.observe,
		BatchRunners: opts.batchRunners,
		ObserveBatch: opts.observeBatch,
		Logger:       opts.logger,
		Accepting:    opts.accepting,

		Ingest:                 config.Ingest{BatchWindow: &window, MaxConnectionsPerAddress: opts.perAddress},
		RejectLogInterval:      opts.rejectEvery,
		LogDeliveriesPerSecond: opts.linesPerSec,
	})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
	})
	return &testBundle{addr: ln.Addr().String(), pool: pool, baseURL: "http://" + ln.Addr().String(), client: &http.Client{Timeout: 10 * time.Second}}
}

func source(t *testing.T, name, provider string, secrets ...string) ingest.Source {
	t.Helper()
	v, err := verify.New(verify.Config{Provider: provider, Secrets: secrets})
	require.NoError(t, err)
	return ingest.Source{Name: name, Provider: provider, Verifier: v}
}

// response is a decoded answer: the 2xx shape and the error shape together.
type response struct {
	status     int
	header     http.Header
	raw        []byte
	ID         int64  `json:"id"`
	Source     string `json:"source"`
	DeliveryID string `json:"delivery_id"`
	Status     string `json:"status"`
	Error      struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (b *testBundle) post(t *testing.T, path string, body []byte, header http.Header) response {
	t.Helper()
	var (
		resp *http.Response
		err  error
	)
	// A 413 or 431 is answered before the request is read to its end, and
	// the server then closes: the client can see a broken pipe or a reset
	// instead of the answer. Such a request was not read whole, so nothing
	// of it was stored, and sending it again is safe.
	for attempt := 0; attempt < 5; attempt++ {
		req, rerr := http.NewRequest(http.MethodPost, b.baseURL+path, bytes.NewReader(body))
		require.NoError(t, rerr)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err = b.client.Do(req)
		if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
			break
		}
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	require.NoError(t, json.Unmarshal(raw, &r), "body: %s", raw)
	require.Equal(t, "application/json", strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	return r
}

// signed signs body as provider would with secret and returns the headers.
func signed(t *testing.T, provider, secret string, body []byte, msg verify.Message, at time.Time) http.Header {
	t.Helper()
	s, err := verify.NewSigner(provider, secret)
	require.NoError(t, err)
	h, err := s.Sign(body, msg, at)
	require.NoError(t, err)
	return h
}

// counts is what the database holds: a 4xx must leave it unchanged.
type counts struct{ inbox, jobs int }

func (b *testBundle) counts(t *testing.T) counts {
	t.Helper()
	var c counts
	require.NoError(t, b.pool.QueryRow(context.Background(),
		"SELECT (SELECT count(*) FROM inbox), (SELECT count(*) FROM river_job)").Scan(&c.inbox, &c.jobs))
	return c
}

func TestHealth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := b.client.Get(b.baseURL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
}

func TestReadyzWhenDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	logger, logs := testlog.New(t)
	pool := unreachablePool(t)
	b := setupWith(t, setupOpts{pool: pool, logger: logger})
	resp, err := b.client.Get(b.baseURL + "/readyz")
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "5", resp.Header.Get("Retry-After"))
	require.JSONEq(t, `{"status":"unavailable","reason":"database unavailable"}`, string(raw))
	// The listener is public: the driver's error, with the database's
	// user, name and address, is for the log only.
	port := strconv.Itoa(int(pool.Config().ConnConfig.Port))
	for _, secret := range []string{"nobody", "none", port, "127.0.0.1"} {
		require.NotContains(t, string(raw), secret)
	}
	require.Contains(t, logs.String(), "not ready: database unavailable")
	require.Contains(t, logs.String(), "user=nobody database=none")
	require.Contains(t, logs.String(), "127.0.0.1:"+port)

	resp, err = b.client.Get(b.baseURL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the process is up even when the database is not")
}

// While the process starts, /readyz says so, and leaves the log to the
// start's own lines.
func TestReadyzWhileStarting(t *testing.T) {
	t.Parallel()
	logger, logs := testlog.New(t)
	var started atomic.Bool
	b := setupWith(t, setupOpts{logger: logger, ready: func(ctx context.Context) error {
		if !started.Load() {
			return fmt.Errorf("%w: waiting for the database", ingest.ErrStarting)
		}
		return nil
	}})
	get := func() (int, string) {
		resp, err := b.client.Get(b.baseURL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(raw)
	}
	status, body := get()
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.JSONEq(t, `{"status":"unavailable","reason":"starting"}`, body)
	require.NotContains(t, logs.String(), "not ready")

	started.Store(true)
	status, body = get()
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"status":"ready"}`, body)
}

// unreachablePool points at a loopback port nothing listens on.
func unreachablePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	pool, err := pgxpool.New(context.Background(), "postgres://nobody:x@"+addr+"/none?connect_timeout=2")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// Until the schema is known to be right, nothing is stored or
// acknowledged: the provider is asked to come back, as when the database
// is down.
func TestNotAcceptingAnswers503(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		var accepting atomic.Bool
		opts.accepting = func() error {
			if !accepting.Load() {
				return errors.New("schema not verified")
			}
			return nil
		}
		b := setupWith(t, opts)
		body := githubBody(80)
		h := githubHeaders(t, githubSecret, "gh-before-migrated", body)
		r := b.post(t, "/webhooks/github", body, h)
		require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.raw)
		require.Equal(t, "unavailable", r.Error.Code)
		require.Equal(t, "5", r.header.Get("Retry-After"))
		require.Equal(t, counts{0, 0}, b.counts(t))

		accepting.Store(true)
		r = b.post(t, "/webhooks/github", body, h)
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.raw)
		require.Equal(t, counts{1, 1}, b.counts(t))
	})
}
