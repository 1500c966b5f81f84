package destination_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A rolling deploy that adds a destination: once a process of the new
// configuration has started, every delivery received reaches the new
// destination, whichever process receives and fetches it; the replica of
// the old configuration leaves processing to the new one and fails
// nothing.
func TestEveryDeliveryAfterTheNewConfigStartsReachesTheNewDestination(t *testing.T) {
	t.Parallel()
	older := setupWith(t, setupOpts{fingerprint: "config-v1"})
	goodRecv := receiver.New(t, secret)
	newer := setupWith(t, setupOpts{pool: older.pool, recv: older.recv, fingerprint: "config-v2",
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
		return older.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'good' AND state = 'succeeded'") == n
	}, 30*time.Second, 20*time.Millisecond, "every delivery reached the new destination")
	require.Eventually(t, func() bool {
		return older.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'app' AND state = 'succeeded'") == n
	}, 30*time.Second, 20*time.Millisecond)
	require.Zero(t, older.count(t, "SELECT count(*) FROM destination_send WHERE state = 'failed'"))
	require.Len(t, goodRecv.Effects(), n)
	require.Zero(t, older.count(t, "SELECT count(*) FROM inbox_pending"), "every delivery was processed")
}
