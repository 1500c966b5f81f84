package handlers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Stripe event's resource is the object it describes (data.object.id):
// an older event of one customer, delivered after a newer one, is stale,
// and the customer's version is what the newer one set.
func TestStripeEventsAreOrderedByTheirObject(t *testing.T) {
	t.Parallel()
	register, seen := staleProbe(t, "stripe", "customer.updated")
	b := setupWith(t, setupOpts{register: register})
	customerUpdated := func(id string, created time.Time) []byte {
		return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"customer.updated","created":%d,"data":{"object":{"id":"cus_1","object":"customer"}}}`,
			id, created.Unix()))
	}
	t1 := time.Now().Add(-time.Hour).Truncate(time.Second)
	newer, older := newID("evt"), newID("evt")
	b.WaitStatus(t, b.deliver(t, "stripe", newer, "customer.updated", customerUpdated(newer, t1.Add(time.Minute)), t1.Add(time.Minute)), "processed")
	b.WaitStatus(t, b.deliver(t, "stripe", older, "customer.updated", customerUpdated(older, t1), t1), "processed")
	require.Equal(t, map[string]bool{newer: false, older: true}, seen())
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM resource_version WHERE source = 'stripe' AND resource_key = 'cus_1'
		AND delivery_id = $1`, newer))
}
