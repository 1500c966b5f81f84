package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/internal/admin/contract"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/internal/testproc"
)

func TestMain(m *testing.M) {
	code := testdb.Run(m)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath)) // built by hookinboxBinary
	}
	os.Exit(code)
}

const adminToken = "cmd-test-admin-token"

// shipped is what the hookinbox binary is built with.
var shipped = Extensions{Handlers: AllShipped()}

type testBundle struct {
	configPath string
	listen     string
	adminAddr  string
	env        env
	stderr     *testlog.Buffer
}

// setup writes a config using the repository's sources on a free port.
// databaseURL "" means the embedded PostgreSQL under a temp data dir.
func setup(t *testing.T, databaseURL string) *testBundle { return setupEnv(t, databaseURL, nil) }

// setupEnv is setup with more environment variables for the config.
func setupEnv(t *testing.T, databaseURL string, extra map[string]string) *testBundle {
	t.Helper()
	// Not t.TempDir: its 0700 parent would keep the postgres user (the
	// embedded server's user when tests run as root) out, sending the
	// cluster to a fallback directory outside the test's cleanup.
	dir, err := os.MkdirTemp("", "hookinbox-cmd-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	listen := freeAddr(t)
	committed, err := os.ReadFile(filepath.Join("..", "..", "hookinbox.yaml"))
	require.NoError(t, err)
	dataDir := filepath.Join(dir, "data")
	cfg := fmt.Sprintf("%s\ndata_dir: %q\nshutdown_timeout: 5s\n", committed, dataDir)
	path := filepath.Join(dir, "hookinbox.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))

	adminAddr := freeAddr(t)
	vars := map[string]string{"HOOKINBOX_LISTEN": listen, "DATABASE_URL": databaseURL,
		"HOOKINBOX_ADMIN_LISTEN": adminAddr, "HOOKINBOX_ADMIN_TOKEN": adminToken}
	for k, v := range extra {
		vars[k] = v
	}
	stderr := &testlog.Buffer{}
	return &testBundle{
		configPath: path,
		listen:     listen,
		adminAddr:  adminAddr,
		stderr:     stderr,
		env: env{stdout: &testlog.Buffer{}, stderr: stderr, lookup: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		}, ext: shipped, adminTransport: contract.Transport(t, nil, true)},
	}
}

func freeAddr(t *testing.T) string { return testproc.FreeAddr(t) }

// serve runs `hookinbox serve` until the test ends, and waits for /readyz.
func (b *testBundle) serve(t *testing.T, args ...string) {
	t.Helper()
	b.waitReady(t, b.start(t, args...))
}

// start runs `hookinbox serve` until the test ends. The channel gets its
// exit code if it stops before then.
func (b *testBundle) start(t *testing.T, args ...string) <-chan int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, exited := make(chan int, 1), make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"serve", "--config", b.configPath}, args...), b.env)
		done <- code
		exited <- code
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			require.Equal(t, 0, code, "serve exit code; log:\n%s", b.stderr.String())
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop within 30s; log:\n%s", b.stderr.String())
		}
	})
	return exited
}

// waitReady polls /readyz until it answers 200 or serve exits.
func (b *testBundle) waitReady(t *testing.T, exited <-chan int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + b.listen + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case code := <-exited:
			t.Fatalf("serve exited with %d before ready; log:\n%s", code, b.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready after 60s; log:\n%s", b.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// send runs `hookinbox send` and returns its exit code and output.
func (b *testBundle) send(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out := &testlog.Buffer{}
	e := b.env
	e.stdout, e.stderr = out, out
	code := run(context.Background(), append([]string{"send", "--config", b.configPath}, args...), e)
	return code, out.String()
}

func TestServeAndSend(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	b.serve(t)

	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")
	require.Contains(t, out, `"status":"accepted"`)

	code, out = b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "200 OK")
	require.Contains(t, out, `"status":"duplicate"`)

	for _, args := range [][]string{
		{"--source", "github", "--event", "push", "--new-id"},
		{"--source", "github", "--event", "issues"},
		{"--source", "stripe", "--event", "payment_intent.succeeded"},
		{"--source", "stripe", "--event", "payment_intent.succeeded", "--new-id"},
		{"--source", "billing", "--event", "invoice.paid"},
	} {
		code, out := b.send(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, out)
		require.Contains(t, out, "202 Accepted", args)
	}

	// The workers run: every accepted delivery is handled, and the issues
	// event reached the shipped GitHub mirror.
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool {
		var total, done int
		require.NoError(t, pool.QueryRow(context.Background(),
			"SELECT count(*), count(*) FILTER (WHERE status IN ('processed', 'skipped')) FROM delivery").Scan(&total, &done))
		return total == 6 && done == 6
	}, 20*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	var title string
	require.NoError(t, pool.QueryRow(context.Background(),
		"SELECT title FROM github_issue_mirror WHERE repo = 'acme/webshop' AND number = 42").Scan(&title))
	require.Equal(t, "Checkout shows 0.00 for JPY orders", title)
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, "postgres://unused")
	code, out := b.send(t, "--source", "nope", "--event", "push")
	require.Equal(t, 1, code)
	require.Contains(t, out, `no source "nope"`)

	code, out = b.send(t, "--source", "github", "--event", "no_such_event")
	require.Equal(t, 1, code)
	require.Contains(t, out, "no sample for github event")
	require.Contains(t, out, "push")

	// Nothing listens: the error says so rather than pretending.
	code, out = b.send(t, "--source", "github", "--event", "push", "--url", "http://"+freeAddr(t)+"/webhooks/github")
	require.Equal(t, 1, code)
	require.Contains(t, out, "connection refused")
}

func TestServeStopsOnBadConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("sources: [{name: a, provider: acme, secrets: [x]}]\n"), 0o600))
	out := &testlog.Buffer{}
	code := run(context.Background(), []string{"serve", "--config", path}, env{stdout: out, stderr: out, lookup: func(string) (string, bool) { return "", false }})
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "sources[0] (a).provider: unknown provider")
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	// An empty database, not the migrated template.
	ctx := context.Background()
	name := fmt.Sprintf("hookinbox_migrate_%d", time.Now().UnixNano())
	admin, err := pgxpool.New(ctx, testdb.AdminURL())
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)") })
	url := replaceDatabase(t, testdb.AdminURL(), name)

	b := setup(t, url)
	for i := 0; i < 2; i++ { // the second run finds nothing to do
		out := &testlog.Buffer{}
		e := b.env
		e.stderr = out
		require.Equal(t, 0, run(ctx, []string{"migrate", "--config", b.configPath}, e), out.String())
	}
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM inbox").Scan(&n))
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM river_job").Scan(&n))
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	out := &testlog.Buffer{}
	require.Equal(t, 2, run(context.Background(), []string{"frobnicate"}, env{stdout: out, stderr: out}))
	require.Contains(t, out.String(), "unknown command")
}
func replaceDatabase(t *testing.T, raw, db string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.Path = "/" + db
	return u.String()
}

// A newcomer's first run: no database configured, so serve starts its own
// PostgreSQL, and stops it on exit.
func TestServeEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")
	require.Contains(t, b.stderr.String(), "pgembed: PostgreSQL ready")
	// Its settings are hookinbox's own: durable, and sized for an inbox.
	require.NotContains(t, b.stderr.String(), "msg=\"PostgreSQL setting can lose")
	require.NotContains(t, b.stderr.String(), "setting=max_wal_size")
}

// The saga as a user watches it: serve with a downstream configured, send a
// payment, read the log. The stub refuses fulfillment, so the compensation
// runs too.
func TestServeRunsTheSaga(t *testing.T) {
	t.Parallel()
	stub := downstreamstub.New(t)
	stub.SetFallback("/fulfill", downstreamstub.Refuse)
	b := setupEnv(t, testdb.URL(t), map[string]string{
		"HOOKINBOX_FULFILLMENT_URL": stub.URL + "/fulfill",
		"HOOKINBOX_PAYMENTS_URL":    stub.URL,
	})
	b.serve(t)
	code, out := b.send(t, "--source", "stripe", "--event", "payment_intent.succeeded")
	require.Equal(t, 0, code, out)

	evt := "evt_3QxHookinboxSample01" // the sample's id
	fulfillKey := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "fulfill")
	refundKey := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "refund")
	require.Eventually(t, func() bool { return strings.Contains(b.stderr.String(), "saga: refund accepted") },
		20*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
	log := b.stderr.String()
	for _, want := range []string{
		`msg="saga: payment credited, fulfillment enqueued" role=all source=stripe delivery_id=` + evt,
		`msg="saga: fulfillment refused; compensating with a refund" role=all source=stripe delivery_id=` + evt,
		"step=fulfill idempotency_key=" + fulfillKey,
		"step=refund idempotency_key=" + refundKey,
	} {
		require.Contains(t, log, want)
	}
	require.Len(t, stub.Effects("/v1/refunds"), 1)
}

func appendConfig(path, extra string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(extra)
	return err
}

// A second serve, or anything else on the port, stops startup with an error
// that says which variable (or key) moves it.
func TestServeRefusesATakenPort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ envVar, key string }{{"HOOKINBOX_LISTEN", "listen"}, {"HOOKINBOX_ADMIN_LISTEN", "admin.listen"}} {
		b := setup(t, "postgres://unused")
		addr := b.listen
		if tc.key == "admin.listen" {
			addr = b.adminAddr
		}
		taken, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		defer taken.Close()
		code := run(context.Background(), []string{"serve", "--config", b.configPath}, b.env)
		require.Equal(t, 1, code, b.stderr.String())
		require.Contains(t, b.stderr.String(), tc.key+" "+addr+": the address is already in use")
		require.Contains(t, b.stderr.String(), "is another hookinbox serve running?")
		require.Contains(t, b.stderr.String(), tc.envVar)
	}
}
