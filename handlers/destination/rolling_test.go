package destination_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/jobs"
)

// A rolling deploy that adds a destination: once a process of the new
// configuration has started, every delivery received reaches the new
// destination, whichever process receives and fetches it; the replica of
// the old configuration leaves processing to the new one and fails
// nothing. The new process's workers start only after the deliveries are
// in, so the old replica certainly fetches them first.
func TestEveryDeliveryAfterTheNewConfigStartsReachesTheNewDestination(t *testing.T) {
	t.Parallel()
	older := setupWith(t, setupOpts{fingerprint: "config-v1"})
	goodRecv := receiver.New(t, secret)
	newer := setupWith(t, setupOpts{pool: older.pool, recv: older.recv, fingerprint: "config-v2", noStart: true,
		extra:  []destination.Destination{{Name: "good", URL: goodRecv.URL + "/hooks", Secret: secret, Retry: fast}},
		routes: []destination.Route{{Source: "billing", Events: []string{"*"}, To: []string{"good"}}}})

	const n = 40
	for i := range n {
		receivedBy := older // the old replica's ingest, as a load balancer spreads it
		if i%2 == 1 {
			receivedBy = newer
		}
		receivedBy.deliver(t, "invoice.paid", fmt.Sprintf("inv_roll_%d", i), time.Now())
	}
	require.Eventually(t, func() bool {
		return older.count(t, "SELECT count(*) FROM river_job WHERE (metadata->>'snoozes')::int > 0") > 0
	}, 20*time.Second, 10*time.Millisecond, "the old replica fetched deliveries and left them")
	newer.start(t)

	require.Eventually(t, func() bool {
		return older.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'good' AND state = 'succeeded'") == n
	}, 30*time.Second, 20*time.Millisecond, "every delivery reached the new destination")
	require.Eventually(t, func() bool {
		return older.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'app' AND state = 'succeeded'") == n
	}, 30*time.Second, 20*time.Millisecond)
	require.Zero(t, older.count(t, "SELECT count(*) FROM destination_send WHERE state = 'failed'"))
	require.Len(t, goodRecv.Effects(), n)
	require.Zero(t, older.count(t, "SELECT count(*) FROM inbox_pending"), "every delivery was processed")
}

// A newer configuration that records itself but takes no processing job
// (its processes wedged) holds the older workers' deliveries back only
// for jobs.MaxDeferrals looks: then they are processed all the same.
func TestAWedgedNewerConfigDelaysProcessingBoundedly(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	outcomes := map[string]int{}
	older := setupWith(t, setupOpts{fingerprint: "config-v1", deferrals: func(o string) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[o]++
	}})
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	wedged, err := jobs.StartGeneration(ctx, older.pool, jobs.GenerationConfig{Fingerprint: "config-v2", Every: 50 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, wedged.Settle(ctx))

	id, _ := older.deliver(t, "invoice.paid", "inv_wedged", time.Now())
	require.Equal(t, "succeeded", older.waitSend(t, id, "succeeded"))
	var snoozes int
	require.NoError(t, older.pool.QueryRow(ctx,
		`SELECT coalesce((metadata->>'snoozes')::int, 0) FROM river_job WHERE kind = 'process_delivery'`).Scan(&snoozes))
	require.Equal(t, jobs.MaxDeferrals, snoozes, "left to the newer configuration first, as long as allowed")
	require.Contains(t, older.log.String(), "no process of the newer configuration took this job")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{"deferred": jobs.MaxDeferrals, "processed_outdated": 1}, outcomes, "counted for the metric")
}
