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

// max_in_flight binds on its own across replicas: with no rate limit and
// a slow receiver, three processes with a backlog between them could hold
// three times max_in_flight requests at once (each sender keeps its own
// under it). The receiver sees max_in_flight at once, and never more.
func TestMaxInFlightBindsAcrossReplicas(t *testing.T) {
	t.Parallel()
	const maxInFlight, sends = 3, 40
	// A timeout far above the delay: a request cut short would leave the
	// receiver holding it after its claim was freed.
	limits := func(d *config.Destination) {
		d.MaxInFlight, d.RateLimit, d.Timeout = maxInFlight, 0, config.Duration(10*time.Second)
	}
	first := setupWith(t, setupOpts{dest: limits})
	first.recv.SetFallback(receiver.Action{Delay: 250 * time.Millisecond})
	replicas := []*bundle{first}
	for range 2 {
		pool, err := pgxpool.NewWithConfig(context.Background(), first.pool.Config().Copy())
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		replicas = append(replicas, setupWith(t, setupOpts{dest: limits, pool: pool, recv: first.recv}))
	}
	var ids []string
	for i := range sends {
		id, _ := replicas[i%len(replicas)].deliver(t, "invoice.paid", fmt.Sprintf("inv_f%d", i), time.Now())
		ids = append(ids, id)
	}
	for _, id := range ids {
		first.waitSend(t, id, "succeeded")
	}
	require.Len(t, first.recv.Effects(), sends)
	sending := 0
	for _, r := range replicas {
		if r.observed.Load() > 0 {
			sending++
		}
	}
	t.Logf("in flight at most %d, sends made by %d replicas", first.recv.MaxInFlight(), sending)
	require.LessOrEqual(t, first.recv.MaxInFlight(), maxInFlight)
	require.Equal(t, maxInFlight, first.recv.MaxInFlight(), "the backlog filled max_in_flight: the limit, not the load, bound it")
	require.Greater(t, sending, 1, "the replicas shared the work")
}
