package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/alerts"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The Overview shows the alerts open now, each linking to its row on the
// Alerts page and to its subject's page; a resolved one is left to the
// Alerts page, whose subjects link to their pages too.
func TestConsoleOverviewShowsOpenAlerts(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	ctx := context.Background()
	e := &alerts.Evaluator{Rules: alerts.Rules{DestinationFailing: ptr(10 * time.Minute), DeliveriesFailed: ptr(1)}, Inbox: b.inbox}
	evaluate := func() {
		t.Helper()
		require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			_, _, err := e.EvaluateTx(ctx, tx)
			return err
		}))
	}
	page := string(b.do(t, http.MethodGet, "/console/", "", nil).body)
	require.Contains(t, page, `<div class="big" id="open-alerts"><a href="/console/alerts">0</a></div>`)

	_, err := b.pool.Exec(ctx, `INSERT INTO destination_state (destination, failing_since, last_error)
		VALUES ('orders-api', now() - interval '11 minutes', 'HTTP 503')`)
	require.NoError(t, err)
	failed := b.deliver(t, "github", "gh-alert-1", "issues", `{}`)
	testdb.SetStatus(t, b.pool, "failed", failed)
	evaluate()
	testdb.SetStatus(t, b.pool, "processed", failed) // replayed: resolves deliveries_failed
	evaluate()
	var open, resolved int64
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT id FROM alert WHERE rule = 'destination_failing' AND resolved_at IS NULL`).Scan(&open))
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT id FROM alert WHERE rule = 'deliveries_failed' AND resolved_at IS NOT NULL`).Scan(&resolved))

	r := b.do(t, http.MethodGet, "/console/", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	page = string(r.body)
	require.Contains(t, page, `<div class="big" id="open-alerts"><a href="/console/alerts">1</a></div>`)
	require.Contains(t, page, fmt.Sprintf(`<li id="open-a%d"><a href="/console/alerts#a%d">destination_failing orders-api</a> (<a href="/console/#dest-orders-api">open orders-api</a>): `+
		`<span class="error">Destination orders-api failing since`, open, open))
	require.NotContains(t, page, fmt.Sprintf(`id="open-a%d"`, resolved), "resolved: not on the Overview")

	page = string(b.do(t, http.MethodGet, "/console/alerts", "", nil).body)
	require.Contains(t, page, fmt.Sprintf(`<tr id="a%d">`, open))
	require.Contains(t, page, `<a href="/console/#dest-orders-api">orders-api</a>`)
	require.Contains(t, page, `<a href="/console/deliveries?source=github&amp;status=failed">github</a>`)
}
