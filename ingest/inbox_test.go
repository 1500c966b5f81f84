package ingest_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// newInbox is an Inbox on a fresh database, with an insert-only River.
func newInbox(t *testing.T) (*pgxpool.Pool, *ingest.Inbox) {
	t.Helper()
	pool := testdb.New(t)
	river, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	return pool, ingest.NewInbox(pool, river)
}

// An event recovered through the provider's API and the same event arriving
// later as a webhook are one delivery, even if the bytes differ.
func TestRecordRecoveredThenWebhookIsDuplicate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, inbox := newInbox(t)

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

// A conflict record keeps the body up to MaxConflictBody, and its full
// size, and drops the credentials a proxy may add, as the inbox does.
func TestRecordConflictCapsTheBody(t *testing.T) {
	t.Parallel()
	pool, inbox := newInbox(t)
	ctx := context.Background()
	d := ingest.Delivery{Source: "github", DeliveryID: "gh-big", EventType: "push", Headers: http.Header{}, Payload: []byte(`{}`)}
	rec, err := inbox.Record(ctx, d)
	require.NoError(t, err)

	d.Payload = bytes.Repeat([]byte("x"), ingest.MaxConflictBody+10)
	d.Headers = http.Header{"Authorization": {"Bearer secret"}, "X-Github-Delivery": {"gh-big"}}
	_, err = inbox.Record(ctx, d)
	require.ErrorIs(t, err, ingest.ErrDeliveryConflict)
	require.NoError(t, inbox.RecordConflict(ctx, d, rec.ID))
	var (
		n, size int
		headers map[string][]string
	)
	require.NoError(t, pool.QueryRow(ctx, "SELECT octet_length(body), body_size, headers FROM delivery_conflict").Scan(&n, &size, &headers))
	require.Equal(t, ingest.MaxConflictBody, n)
	require.Equal(t, ingest.MaxConflictBody+10, size)
	require.NotContains(t, headers, "Authorization")
}
