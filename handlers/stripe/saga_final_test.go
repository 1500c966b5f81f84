package stripe_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// A status the saga is configured to take as final (FinalStatuses) is a
// refusal as 422 is by default: the fulfillment it refuses is refunded,
// once.
func TestSagaConfiguredFinalStatusCompensates(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{finalStatuses: []int{http.StatusGone}})
	b.downstream.SetFallback("/fulfill", downstreamstub.Gone)
	evt, pi := newID("evt"), newID("pi")
	b.deliver(t, "stripe", evt, "payment_intent.succeeded", paymentSucceededPayload(evt, pi, 1200, time.Now()), time.Now())

	s := b.waitSaga(t, pi, "refunded")
	require.Equal(t, sagaState{state: "refunded", credits: 1, refunds: 1, balance: 0}, s)
	require.Len(t, b.downstream.Effects("/v1/refunds"), 1)
}
