package admin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"riverqueue.com/riverui"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const token = "test-admin-token"

type testBundle struct {
	pool    *pgxpool.Pool
	river   *river.Client[pgx.Tx]
	inbox   *ingest.Inbox
	baseURL string
	client  *http.Client
	logs    *testlog.Buffer // the server's log
	t       testing.TB      // the test the client's answers are checked for
}

type setupOpts struct {
	cfg      func(*admin.Config)
	riverUI  bool           // mount River UI under /riverui/
	noWorker bool           // jobs stay queued, for tests that inspect them
	server   **admin.Server // set to the server, for tests that stop it
	// handlers registers handlers for the worker to run (none: every
	// delivery is skipped).
	handlers func(*handlers.Registry)
	// tracer sees every statement on the pool, for tests that commit
	// between two of the server's statements.
	tracer pgx.QueryTracer
}

type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(10 * time.Millisecond) }

func setup(t *testing.T) *testBundle { return setupWith(t, setupOpts{}) }

func setupWith(t *testing.T, opts setupOpts) *testBundle {
	t.Helper()
	logger, logs := testlog.New(t)
	var pool *pgxpool.Pool
	if opts.tracer == nil {
		pool = testdb.New(t)
	} else {
		cfg, err := pgxpool.ParseConfig(testdb.URL(t))
		require.NoError(t, err)
		cfg.ConnConfig.Tracer = opts.tracer
		pool, err = pgxpool.NewWithConfig(context.Background(), cfg)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
	}
	var rc *river.Client[pgx.Tx]
	if opts.noWorker {
		var err error
		rc, err = jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true, Logger: logger})
		require.NoError(t, err)
	} else {
		rc = startWorker(t, pool, opts.handlers)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg := admin.Config{Admin: config.Admin{Token: token, Listen: ln.Addr().String()}, Pool: pool, River: rc, Logger: logger,
		Sources: []string{"github", "stripe", "billing"}}
	if opts.riverUI {
		ui, err := riverui.NewHandler(&riverui.HandlerOpts{Endpoints: riverui.NewEndpoints(rc, nil), Logger: logger, Prefix: "/riverui"})
		require.NoError(t, err)
		require.NoError(t, ui.Start(context.Background()))
		cfg.RiverUI = ui
	}
	if opts.cfg != nil {
		opts.cfg(&cfg)
	}
	srv, err := admin.NewServer(cfg)
	require.NoError(t, err)
	if opts.server != nil {
		*opts.server = srv
	}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
	})
	return &testBundle{pool: pool, river: rc, inbox: ingest.NewInbox(pool, rc), logs: logs,
		// Every answer is checked against the OpenAPI document (newClient).
		baseURL: "http://" + ln.Addr().String(), client: newClient(t, nil), t: t}
}

// startWorker runs a River client working every hookinbox job on pool
// with the handlers register adds (none: deliveries end up skipped).
func startWorker(t *testing.T, pool *pgxpool.Pool, register func(*handlers.Registry)) *river.Client[pgx.Tx] {
	t.Helper()
	logger, _ := testlog.New(t)
	reg := handlers.NewRegistry(handlers.Config{Logger: logger})
	if register != nil {
		register(reg)
	}
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{Registry: reg,
		RetryPolicy: fastRetry{}, FetchPollInterval: 100 * time.Millisecond, Logger: logger})
	require.NoError(t, err)
	require.NoError(t, rc.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rc.Stop(ctx)
	})
	return rc
}

// deliver stores a delivery as ingest does and returns its inbox id.
func (b *testBundle) deliver(t *testing.T, source, deliveryID, eventType string, payload string) int64 {
	t.Helper()
	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: source, DeliveryID: deliveryID, EventType: eventType,
		Headers: http.Header{"Content-Type": {"application/json"}, "X-Github-Delivery": {deliveryID}}, Payload: []byte(payload),
	})
	require.NoError(t, err)
	return rec.ID
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// cookie is the cookie the response sets, or nil.
func (r response) cookie(name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (r response) errorCode(t *testing.T) string {
	t.Helper()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	r.json(t, &e)
	return e.Error.Code
}

// basic is an Authorization header with the token as Basic's password, as
// a browser sends it.
func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// do sends a request with the admin token unless header sets Authorization.
func (b *testBundle) do(t *testing.T, method, path, body string, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, b.baseURL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

func (b *testBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
