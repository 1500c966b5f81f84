package destination_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// max_in_flight and rate_limit hold across replicas: three processes'
// clients, each with a pool of its own on one database, send to one
// receiver, which sees no more than max_in_flight at once and no
// one-second window above 1.5 × rate_limit.
func TestLimitsHoldAcrossReplicas(t *testing.T) {
	t.Parallel()
	const maxInFlight, rate = 3, 20.0
	limits := func(d *config.Destination) { d.MaxInFlight, d.RateLimit = maxInFlight, rate }
	first := setupWith(t, setupOpts{dest: limits})
	first.recv.SetFallback(receiver.Action{Delay: 120 * time.Millisecond})
	replicas := []*bundle{first}
	for range 2 {
		pool, err := pgxpool.NewWithConfig(context.Background(), first.pool.Config().Copy())
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		replicas = append(replicas, setupWith(t, setupOpts{dest: limits, pool: pool, recv: first.recv}))
	}
	var ids []string
	for i := range 60 {
		id, _ := first.deliver(t, "invoice.paid", fmt.Sprintf("inv_l%d", i), time.Now())
		ids = append(ids, id)
	}
	for _, id := range ids {
		first.waitSend(t, id, "succeeded")
	}
	require.Len(t, first.recv.Effects(), 60)
	require.LessOrEqual(t, first.recv.MaxInFlight(), maxInFlight)
	perSecond := first.recv.MaxPerWindow(time.Second)
	require.LessOrEqual(t, perSecond, int(1.5*rate))
	sending := 0
	for _, r := range replicas {
		if r.observed.Load() > 0 {
			sending++
		}
	}
	t.Logf("in flight at most %d, busiest second %d requests, sends made by %d replicas", first.recv.MaxInFlight(), perSecond, sending)
	require.Greater(t, sending, 1, "the replicas shared the work")
}
