package cli

import (
	"context"
	"path"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// Every event a shipped handler takes has a built-in sample, so
// `hookinbox send --event E` can show each handler at work.
func TestEveryShippedEventHasASample(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`
sources:
  - {name: github, provider: github, secrets: [s]}
  - {name: stripe, provider: stripe, secrets: [whsec_s]}
downstream: {fulfillment_url: "http://127.0.0.1:1/fulfill", payments_url: "http://127.0.0.1:1"}
`), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	reg := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{
		{Name: "github", Provider: "github"}, {Name: "stripe", Provider: "stripe"}}})
	pool, err := pgxpool.New(context.Background(), testdb.URL(t))
	require.NoError(t, err)
	defer pool.Close()
	for _, register := range AllShipped() {
		require.NoError(t, register(reg, Deps{Config: cfg, Pool: pool}))
	}
	events := reg.Events()
	require.Contains(t, events["stripe"], "payment_intent.succeeded", "the saga registered too")
	n := 0
	for provider, evs := range events {
		for _, ev := range evs {
			_, err := samples.ReadFile(path.Join("samples", provider, sampleFileName.Replace(ev)+".json"))
			require.NoError(t, err, "%s %s is handled by a shipped handler but has no sample", provider, ev)
			n++
		}
	}
	require.GreaterOrEqual(t, n, 5)
}

// The Stripe ledger's samples, sent as they ship, are processed by its
// handlers and booked.
func TestStripeLedgerSamplesAreBooked(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	b.serve(t)
	for _, event := range []string{"payment_intent.payment_failed", "charge.refunded"} {
		code, out := b.send(t, "--source", "stripe", "--event", event)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "202 Accepted", event)
	}
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool {
		var booked int
		_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM ledger WHERE payment_intent = 'pi_3QxHookinboxSample01'
			AND (kind, amount) IN (('payment_failed', 0), ('charge_refunded', -1500))`).Scan(&booked)
		return booked == 2
	}, 20*time.Second, 50*time.Millisecond, "log:\n%s", b.stderr)
}
