package destination_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// A resource's sends held behind the one in flight go, once it is done,
// oldest first, one after another: each is newer than the one before, so
// none is stale, and a skip_stale route skips none. "app" marks a stale
// event, "skips" (skip_stale) does not send it; each has its receiver.
func TestAnOrderedChainGoesOldestFirst(t *testing.T) {
	t.Parallel()
	skips := receiver.New(t, secret)
	b := setupWith(t, setupOpts{dest: patient, route: func(r *config.Route) { r.Ordered = true },
		extra:  []config.Destination{{Name: "skips", URL: skips.URL, Secret: secret, Timeout: config.Duration(10 * time.Second), Retry: fast}},
		routes: []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"skips"}, Ordered: true, SkipStale: true}},
	})
	gate := make(chan struct{})
	b.recv.Script(receiver.Action{Until: gate})
	skips.Script(receiver.Action{Until: gate})
	const chain = 5
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	sendsOf := func(id string) int {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE delivery_id = $1", id)
	}

	first, _ := b.deliver(t, "invoice.updated", "inv_chain", base)
	require.Eventually(t, func() bool { return len(b.recv.Requests()) == 1 && len(skips.Requests()) == 1 },
		10*time.Second, 5*time.Millisecond, "the first send's requests never began")
	// Each of the others is processed after the one before it: the order
	// processed is the order of their events.
	for n := 1; n < chain; n++ {
		id, _ := b.deliver(t, "invoice.updated", "inv_chain", base.Add(time.Duration(n)*time.Minute))
		require.Eventually(t, func() bool { return sendsOf(id) == 2 }, 10*time.Second, 5*time.Millisecond)
	}
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE state = 'waiting' AND in_line") == 2*(chain-1)
	}, 10*time.Second, 5*time.Millisecond, "the held sends were never put in line")
	require.Equal(t, 2, sendsOf(first))
	close(gate)

	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE state IN ('succeeded', 'failed', 'skipped')") == 2*chain
	}, 20*time.Second, 5*time.Millisecond)
	require.Equal(t, 2*chain, b.count(t, "SELECT count(*) FROM destination_send WHERE state = 'succeeded'"),
		"every send made: none was older than one sent before it")
	for name, recv := range map[string]*receiver.Receiver{"app": b.recv, "skips": skips} {
		var got []int
		for _, r := range recv.Requests() {
			var body struct {
				Timestamp time.Time `json:"timestamp"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &body))
			got = append(got, int(body.Timestamp.Sub(base)/time.Minute))
			require.Empty(t, r.Header.Get("Hookinbox-Stale"), "%s: event %d marked stale", name, got[len(got)-1])
		}
		require.Equal(t, []int{0, 1, 2, 3, 4}, got, "%s: the events in the order sent", name)
		require.Equal(t, 1, recv.MaxInFlight(), "%s: one request at a time", name)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_resource WHERE busy"))
}
