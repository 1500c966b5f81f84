package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testproc"
	"github.com/hookinbox/hookinbox/verify"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// hookinboxBinary builds the real binary once per test run.
func hookinboxBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hookinbox-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "hookinbox")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/hookinbox").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// Three real processes on one database behave as one service: a delivery
// sent to two of them at once is one row and one effect, jobs spread over
// all three, and one retention pass runs, not three.
func TestThreeReplicasBehaveAsOne(t *testing.T) {
	t.Parallel()
	bin := hookinboxBinary(t)
	dbURL := testdb.URL(t)
	stub := downstreamstub.New(t)
	const stripeSecret = "whsec_replicas"

	var replicas []*testBundle
	for i := 0; i < 3; i++ {
		b := setupEnv(t, dbURL, map[string]string{
			"STRIPE_WEBHOOK_SECRET":     stripeSecret,
			"HOOKINBOX_FULFILLMENT_URL": stub.URL + "/fulfill",
			"HOOKINBOX_PAYMENTS_URL":    stub.URL,
		})
		startReplica(t, bin, b, "DATABASE_URL="+dbURL, "STRIPE_WEBHOOK_SECRET="+stripeSecret,
			"HOOKINBOX_FULFILLMENT_URL="+stub.URL+"/fulfill", "HOOKINBOX_PAYMENTS_URL="+stub.URL)
		replicas = append(replicas, b)
	}

	signer, err := verify.NewSigner("stripe", stripeSecret)
	require.NoError(t, err)
	post := func(b *testBundle, body []byte) int {
		h, err := signer.Sign(body, verify.Message{}, time.Now())
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodPost, "http://"+b.listen+"/webhooks/stripe", bytes.NewReader(body))
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	const n = 30
	for i := 0; i < n; i++ {
		body := []byte(fmt.Sprintf(`{"id":"evt_rep_%d","type":"payment_intent.succeeded","created":%d,"data":{"object":{"id":"pi_rep_%d","amount":100,"currency":"eur"}}}`,
			i, time.Now().Unix(), i))
		// The same delivery hits two replicas at once.
		a, b := replicas[i%3], replicas[(i+1)%3]
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for j, r := range []*testBundle{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); statuses[j] = post(r, body) }()
		}
		wg.Wait()
		require.ElementsMatch(t, []int{http.StatusAccepted, http.StatusOK}, statuses, "delivery %d", i)
	}

	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	defer pool.Close()
	ctx := context.Background()
	require.Eventually(t, func() bool {
		var fulfilled int
		require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM payment_saga WHERE state = 'fulfilled'").Scan(&fulfilled))
		return fulfilled == n
	}, 30*time.Second, 100*time.Millisecond)

	var rows, credits, workers int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM inbox").Scan(&rows))
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM ledger WHERE kind = 'credit'").Scan(&credits))
	require.NoError(t, pool.QueryRow(ctx,
		"SELECT count(DISTINCT attempted_by[array_upper(attempted_by, 1)]) FROM river_job WHERE kind IN ('process_delivery', 'process_deliveries', 'stripe_fulfill')").Scan(&workers))
	require.Equal(t, n, rows, "one row per delivery")
	require.Equal(t, n, credits, "one credit per delivery")
	require.Len(t, stub.Effects("/fulfill"), n, "one fulfillment effect per delivery")
	for i := 0; i < n; i++ {
		key := handlers.DeriveKey("stripe", fmt.Sprintf("evt_rep_%d", i), stripe.SagaHandlerName, "fulfill")
		require.Equal(t, 1, stub.Effects("/fulfill")[key])
	}
	require.Greater(t, workers, 1, "jobs were worked by more than one replica")

	// River elects a leader within seconds; only it enqueues periodic jobs.
	var retention, completed int
	require.Eventually(t, func() bool {
		require.NoError(t, pool.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE state = 'completed') FROM river_job WHERE kind = 'retention'").
			Scan(&retention, &completed))
		return completed >= 1
	}, 30*time.Second, 100*time.Millisecond, "a retention pass ran")
	require.Equal(t, 1, retention, "one retention pass for the cluster, not one per replica")
}

// startReplica runs the binary's serve with b's config and ports, and env,
// until the test ends, and waits until it is ready.
func startReplica(t *testing.T, bin string, b *testBundle, env ...string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", b.configPath)
	cmd.Env = append(append(os.Environ(), "HOOKINBOX_LISTEN="+b.listen, "HOOKINBOX_ADMIN_LISTEN="+b.adminAddr,
		"HOOKINBOX_ADMIN_TOKEN="+adminToken), env...)
	b.stderr = testproc.Start(t, cmd)
	testproc.WaitReady(t, "http://"+b.listen+"/readyz", 60*time.Second)
}
