package ingest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// An event recovered through the provider's API and the same event arriving
// later as a webhook are one delivery, even if the bytes differ.
func TestRecordRecoveredThenWebhookIsDuplicate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	river, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	inbox := ingest.NewInbox(pool, river)

	recovered, err := inbox.Record(ctx, ingest.Delivery{
		Source: "stripe", DeliveryID: "evt_1", EventType: "charge.refunded",
		Payload: []byte(`{"id":"evt_1"}`), Origin: ingest.OriginStripeEventsAPI, Headers: http.Header{},
	})
	require.NoError(t, err)
	require.Equal(t, ingest.OutcomeAccepted, recovered.Outcome)

	late, err := inbox.Record(ctx, ingest.Delivery{
		Source: "stripe", DeliveryID: "evt_1", EventType: "charge.refunded",
		Payload: []byte("{\n  \"id\": \"evt_1\"\n}"), Headers: http.Header{},
	})
	require.NoError(t, err)
	require.Equal(t, ingest.Recorded{ID: recovered.ID, Outcome: ingest.OutcomeDuplicate}, late)

	var origin string
	require.NoError(t, pool.QueryRow(ctx, "SELECT origin FROM inbox WHERE id = $1", recovered.ID).Scan(&origin))
	require.Equal(t, ingest.OriginStripeEventsAPI, origin)
}
