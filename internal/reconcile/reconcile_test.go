package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

const testKey = "sk_test_51HookinboxReconcileSecretKey0123456789"

type testBundle struct {
	pool   *pgxpool.Pool
	inbox  *ingest.Inbox
	stripe *fakeStripe
	cfg    reconcile.Config
	now    time.Time // whole seconds, as Stripe's created is
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := testdb.New(t)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	fake := newFakeStripe(t, testKey)
	return &testBundle{
		pool:   pool,
		inbox:  ingest.NewInbox(pool, rc),
		stripe: fake,
		cfg:    reconcile.Config{Source: "stripe", StripeAPI: config.StripeAPI{APIKey: testKey, APIBase: fake.srv.URL}},
		now:    time.Now().UTC().Truncate(time.Second),
	}
}

// webhook records ev as if its webhook had arrived, with the compact body
// Stripe signs rather than the API's pretty-printed one.
func (b *testBundle) webhook(t *testing.T, ev *fakeEvent) ingest.Recorded {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d}`, ev.ID, ev.Type, ev.Created.Unix())
	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: b.cfg.Source, DeliveryID: ev.ID, EventType: ev.Type, OccurredAt: ev.Created,
		Headers: http.Header{"Stripe-Signature": {"t=1,v1=00"}}, Payload: []byte(body),
	})
	require.NoError(t, err)
	require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
	return rec
}

type inboxRow struct {
	ID         int64
	Origin     string
	EventType  string
	OccurredAt time.Time
	Headers    map[string][]string
	Payload    []byte
	Jobs       int
}

func (b *testBundle) row(t *testing.T, deliveryID string) inboxRow {
	t.Helper()
	var r inboxRow
	err := b.pool.QueryRow(context.Background(), `
		SELECT id, origin, event_type, occurred_at, headers, payload,
		       (SELECT count(*) FROM river_job
		         WHERE kind = 'process_delivery' AND (args->>'inbox_id')::bigint = inbox.id)
		FROM inbox WHERE source = $1 AND delivery_id = $2`, b.cfg.Source, deliveryID,
	).Scan(&r.ID, &r.Origin, &r.EventType, &r.OccurredAt, &r.Headers, &r.Payload, &r.Jobs)
	require.NoError(t, err, "inbox row for %s", deliveryID)
	return r
}

func (b *testBundle) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), query).Scan(&n))
	return n
}

func TestReconcileRecoversMissingEventsAcrossPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	since := b.now.Add(-72 * time.Hour)

	evs := []*fakeEvent{
		stripeEvent("evt_5", "payment_intent.succeeded", b.now.Add(-1*time.Hour)),
		stripeEvent("evt_4", "charge.refunded", b.now.Add(-2*time.Hour)),
		stripeEvent("evt_3", "payment_intent.payment_failed", b.now.Add(-3*time.Hour)),
		stripeEvent("evt_2", "payment_intent.succeeded", b.now.Add(-4*time.Hour)),
		stripeEvent("evt_1", "charge.refunded", since), // on the boundary: included
	}
	delivered := stripeEvent("evt_delivered", "payment_intent.succeeded", b.now.Add(-90*time.Minute))
	delivered.Delivered = true
	tooOld := stripeEvent("evt_old", "payment_intent.succeeded", since.Add(-time.Second))
	b.stripe.add(evs[0], delivered, evs[1], evs[2], evs[3], evs[4], tooOld)

	// evt_4 and evt_2 did arrive; only Stripe's bookkeeping missed it.
	before := map[string]inboxRow{}
	for _, ev := range []*fakeEvent{evs[1], evs[3]} {
		b.webhook(t, ev)
		before[ev.ID] = b.row(t, ev.ID)
	}

	cfg := b.cfg
	cfg.PageSize = 2
	res, err := reconcile.Reconcile(ctx, b.inbox, cfg, since)
	require.NoError(t, err)
	require.Equal(t, reconcile.Result{Examined: 5, AlreadyInInbox: 2, Recovered: 3}, res)

	// Three pages, each continuing after the last id of the one before.
	reqs := b.stripe.recorded()
	require.Len(t, reqs, 3)
	for i, wantAfter := range []string{"", "evt_4", "evt_2"} {
		q := reqs[i].Query
		require.Equal(t, "Bearer "+testKey, reqs[i].Authorization)
		require.Equal(t, "false", q.Get("delivery_success"))
		require.Equal(t, strconv.FormatInt(since.Unix(), 10), q.Get("created[gte]"))
		require.Equal(t, "2", q.Get("limit"))
		require.Equal(t, wantAfter, q.Get("starting_after"), "request %d", i)
	}

	for _, ev := range []*fakeEvent{evs[0], evs[2], evs[4]} {
		r := b.row(t, ev.ID)
		require.Equal(t, ingest.OriginStripeEventsAPI, r.Origin)
		require.Equal(t, ev.Type, r.EventType)
		require.True(t, ev.Created.Equal(r.OccurredAt), "occurred_at %v, want %v", r.OccurredAt, ev.Created)
		// The event's own bytes from the page, indentation and all.
		require.Equal(t, strings.TrimSpace(ev.Raw), string(r.Payload))
		require.Equal(t, []string{"stripe-events-api"}, r.Headers[reconcile.RecoveredHeader])
		require.Equal(t, 1, r.Jobs, "process_delivery jobs for %s", ev.ID)
	}
	for id, want := range before {
		require.Equal(t, want, b.row(t, id), "webhook row %s must be untouched", id)
	}
	require.Equal(t, 5, b.count(t, "SELECT count(*) FROM inbox"))
	require.Equal(t, 5, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery'"))
}

func TestReconcileSecondPassRecoversNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.stripe.add(
		stripeEvent("evt_b", "payment_intent.succeeded", b.now.Add(-time.Hour)),
		stripeEvent("evt_a", "charge.refunded", b.now.Add(-2*time.Hour)),
	)
	since := b.now.Add(-24 * time.Hour)

	first, err := reconcile.Reconcile(ctx, b.inbox, b.cfg, since)
	require.NoError(t, err)
	require.Equal(t, reconcile.Result{Examined: 2, Recovered: 2}, first)
	stored := b.row(t, "evt_a")

	// Stripe re-renders an event as its other endpoints succeed; the new
	// bytes are the same event, not a conflict to report.
	b.stripe.setPendingWebhooks("evt_a", 0)

	second, err := reconcile.Reconcile(ctx, b.inbox, b.cfg, since)
	require.NoError(t, err)
	require.Equal(t, reconcile.Result{Examined: 2, AlreadyInInbox: 2}, second)
	require.Equal(t, stored, b.row(t, "evt_a"))
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery'"))
}

func TestReconcileZeroSinceListsEverythingStripeKeeps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.stripe.add(stripeEvent("evt_month_old", "charge.refunded", b.now.Add(-29*24*time.Hour)))

	res, err := reconcile.Reconcile(context.Background(), b.inbox, b.cfg, time.Time{})
	require.NoError(t, err)
	require.Equal(t, reconcile.Result{Examined: 1, Recovered: 1}, res)

	reqs := b.stripe.recorded()
	require.Len(t, reqs, 1)
	require.False(t, reqs[0].Query.Has("created[gte]"))
	require.Equal(t, "100", reqs[0].Query.Get("limit"))
}

func TestReconcileAPIErrorNeverContainsKey(t *testing.T) {
	t.Parallel()
	const wrongKey = "sk_test_51RevokedKeyThatMustNotLeak9876543210"

	t.Run("Stripe's error shape", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.stripe.add(stripeEvent("evt_1", "charge.refunded", b.now))
		cfg := b.cfg
		cfg.APIKey = wrongKey

		res, err := reconcile.Reconcile(context.Background(), b.inbox, cfg, b.now.Add(-time.Hour))
		require.Error(t, err)
		require.NotContains(t, err.Error(), wrongKey)
		require.Contains(t, err.Error(), "Invalid API Key provided")
		require.ErrorIs(t, err, reconcile.ErrAuthentication)
		var apiErr *reconcile.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
		require.Equal(t, "req_fake_error", apiErr.RequestID)
		require.Equal(t, reconcile.Result{}, res)
		require.Equal(t, 0, b.count(t, "SELECT count(*) FROM inbox"))
		// A 401 is final: stripe-go must not have retried it.
		require.Len(t, b.stripe.recorded(), 1)
	})

	t.Run("a proxy's plain-text 401", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.stripe.setUnauthorizedBody("denied for key " + wrongKey)
		cfg := b.cfg
		cfg.APIKey = wrongKey

		_, err := reconcile.Reconcile(context.Background(), b.inbox, cfg, b.now.Add(-time.Hour))
		require.Error(t, err)
		require.NotContains(t, err.Error(), wrongKey)
		for e := error(err); e != nil; e = errors.Unwrap(e) {
			require.NotContains(t, e.Error(), wrongKey)
		}
	})
}

func TestReconcileRecordErrorAbortsPass(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.stripe.add(
		stripeEvent("evt_2", "charge.refunded", b.now.Add(-time.Minute)),
		stripeEvent("evt_1", "charge.refunded", b.now.Add(-2*time.Minute)),
	)
	// A database that cannot be reached: the first Record fails.
	b.pool.Close()

	res, err := reconcile.Reconcile(context.Background(), b.inbox, b.cfg, b.now.Add(-time.Hour))
	require.Error(t, err)
	require.Contains(t, err.Error(), "record stripe event evt_2")
	require.Equal(t, reconcile.Result{Examined: 1}, res)
}

func TestReconcileInvalidConfigCallsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.cfg
	cfg.APIKey = ""

	_, err := reconcile.Reconcile(context.Background(), b.inbox, cfg, b.now)
	require.EqualError(t, err, "stripe.api_key is required")
	require.Empty(t, b.stripe.recorded())
}
