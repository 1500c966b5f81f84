package destination_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/jobs"
)

// A rolling deploy that adds a destination: once a process of the new
// configuration has started, every delivery received reaches the new
// destination, whichever process receives and fetches it; the replica of
// the old configuration leaves processing to the new one and fails
// nothing. The new process's workers start only after the deliveries are
// in and have waited: the old replica, outdated from the new one's
// start, fetches none of them meanwhile. It looks every 200 ms, so that it
// takes the jobs over only after MaxDeferrals looks (6 s) with none
// running, however slowly a loaded machine starts the new one's workers.
func TestEveryDeliveryAfterTheNewConfigStartsReachesTheNewDestination(t *testing.T) {
	t.Parallel()
	older := setupWith(t, setupOpts{fingerprint: "config-v1", every: 200 * time.Millisecond})
	goodRecv := receiver.New(t, secret)
	newer := setupWith(t, setupOpts{pool: older.pool, recv: older.recv, fingerprint: "config-v2", noStart: true,
		extra:  []config.Destination{{Name: "good", URL: goodRecv.URL + "/hooks", Secret: secret, Retry: fast}},
		routes: []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"good"}}}})

	// The new process has settled (setupWith): the old replica has seen
	// its configuration and stopped fetching processing jobs.
	require.True(t, older.gen.Outdated(), "the old replica saw the new configuration")
	const n = 40
	for i := range n {
		receivedBy := older // the old replica's ingest, as a load balancer spreads it
		if i%2 == 1 {
			receivedBy = newer
		}
		receivedBy.deliver(t, "invoice.paid", fmt.Sprintf("inv_roll_%d", i), time.Now())
	}
	time.Sleep(time.Second) // five of the old replica's looks
	require.Zero(t, older.count(t, "SELECT count(*) FROM river_job WHERE cardinality(attempted_by) > 0 AND kind LIKE 'process_deliver%'"),
		"the old replica fetched no processing job")
	require.Equal(t, n, older.count(t, "SELECT count(*) FROM inbox_pending"))
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
// for jobs.MaxDeferrals looks with none running: then the older worker
// fetches and processes them all the same.
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

	sent := time.Now()
	id, _ := older.deliver(t, "invoice.paid", "inv_wedged", time.Now())
	require.Equal(t, "succeeded", older.waitSend(t, id, "succeeded"))
	require.Greater(t, time.Since(sent), jobs.MaxDeferrals*50*time.Millisecond, "left to the newer configuration first, as long as allowed")
	require.Contains(t, older.log.String(), "no process of the newer configuration takes processing jobs")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{"processed_outdated": 1}, outcomes, "counted for the metric")
}
