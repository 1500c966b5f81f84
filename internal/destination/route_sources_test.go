package destination_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A route of source "*" takes every source's deliveries, and a route of
// one source that source's only: a billing delivery goes to the
// destination the "*" route names, not to the one github's route names.
func TestAStarRouteTakesEverySource(t *testing.T) {
	t.Parallel()
	recv := receiver.New(t, secret)
	b := setupWith(t, setupOpts{recv: recv, dest: patient, route: func(r *config.Route) { r.Source = "*" },
		extra:  []config.Destination{{Name: "github-only", URL: recv.URL + "/github", Secret: secret, Retry: fast}},
		routes: []config.Route{{Source: "github", Events: []string{"*"}, To: []string{"github-only"}}}})
	id, _ := b.deliver(t, "invoice.paid", "in_star", time.Now())
	var to []string
	require.Eventually(t, func() bool {
		require.NoError(t, b.pool.QueryRow(context.Background(),
			"SELECT coalesce(array_agg(destination ORDER BY destination), '{}') FROM destination_send WHERE delivery_id = $1", id).Scan(&to))
		return len(to) > 0
	}, 20*time.Second, 10*time.Millisecond, "processing recorded no send")
	require.Equal(t, []string{"app"}, to, "the sends processing recorded, in one transaction")
	b.waitSendTo(t, id, "app", "succeeded")
}
