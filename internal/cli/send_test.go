package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A body over max_body_bytes got "write: connection reset by peer": the
// service answers 413 before reading it and closes. send refuses it
// itself, with the service's code and the key to change.
func TestSendBodyOverMaxBodyBytes(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	b.serve(t)
	big := filepath.Join(t.TempDir(), "big.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"pad":"`+strings.Repeat("x", config.DefaultMaxBodyBytes)+`"}`), 0o600))

	code, out := b.send(t, "--source", "github", "--event", "push", "--file", big)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "payload_too_large: the body is 5242890 bytes, over max_body_bytes (5242880) in "+b.configPath)
	require.Contains(t, out, "nothing was sent")

	// Sent anyway to a server of the caller's choosing: the service's
	// answer, or the reset with what it means.
	code, out = b.send(t, "--source", "github", "--event", "push", "--file", big, "--url", "http://"+b.listen+"/webhooks/github")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "413")
	require.Contains(t, out, "payload_too_large")
	require.Contains(t, out, "over max_body_bytes (5242880)")

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	var rows int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM inbox").Scan(&rows))
	require.Zero(t, rows)
}

// The saga tour, repeated: each `send --new-id` of the Stripe sample is a
// new payment (new payment intent), not the one already credited.
func TestSendNewIDIsANewPayment(t *testing.T) {
	t.Parallel()
	stub := downstreamstub.New(t)
	url := testdb.URL(t)
	b := setupEnv(t, url, map[string]string{
		"HOOKINBOX_FULFILLMENT_URL": stub.URL + "/fulfill",
		"HOOKINBOX_PAYMENTS_URL":    stub.URL,
	})
	b.serve(t)
	for i := 0; i < 2; i++ {
		code, out := b.send(t, "--source", "stripe", "--event", "payment_intent.succeeded", "--new-id")
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "202 Accepted")
	}
	require.Eventually(t, func() bool { return len(stub.Effects("/fulfill")) == 2 },
		20*time.Second, 50*time.Millisecond, "two fulfillments; log:\n%s", b.stderr)
	require.NotContains(t, b.stderr.String(), "already credited")

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	rows, err := pool.Query(context.Background(), "SELECT payment_intent, delivery_id FROM ledger WHERE kind = 'credit'")
	require.NoError(t, err)
	var intents, events []string
	for rows.Next() {
		var pi, evt string
		require.NoError(t, rows.Scan(&pi, &evt))
		intents, events = append(intents, pi), append(events, evt)
	}
	require.NoError(t, rows.Err())
	require.Len(t, intents, 2)
	require.NotEqual(t, intents[0], intents[1])
	for i := range intents {
		require.Regexp(t, `^pi_[0-9a-f]{20}$`, intents[i])
		require.Equal(t, "evt_"+strings.TrimPrefix(intents[i], "pi_"), events[i], "one stem for the event and its payment")
	}
}
