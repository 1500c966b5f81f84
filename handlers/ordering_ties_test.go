package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
)

// deliverReceivedAt records a delivery as ingest does, with the receipt
// time it says: the ordering tests need receipt order apart from
// processing order.
func (b *testBundle) deliverReceivedAt(t *testing.T, source, id, eventType string, payload []byte, occurredAt, receivedAt time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	var inboxID int64
	require.NoError(t, pgx.BeginFunc(ctx, b.Pool, func(tx pgx.Tx) error {
		rec, err := b.Inbox.RecordTx(ctx, tx, ingest.Delivery{Source: source, DeliveryID: id, EventType: eventType,
			OccurredAt: occurredAt, Headers: http.Header{"Content-Type": {"application/json"}}, Payload: payload})
		if err != nil {
			return err
		}
		inboxID = rec.ID
		_, err = tx.Exec(ctx, "UPDATE inbox SET received_at = $2 WHERE id = $1", rec.ID, receivedAt)
		return err
	}))
	return inboxID
}

// staleProbe registers an EveryEvent handler for source's events that
// records, per delivery id, whether it was stale.
func staleProbe(t *testing.T, source string, events ...string) (func(r *handlers.Registry), func() map[string]bool) {
	return staleProbeWith(t, false, source, events...)
}

// staleProbeWith is staleProbe with a handler that allows batches (batch)
// or not.
func staleProbeWith(t *testing.T, batch bool, source string, events ...string) (func(r *handlers.Registry), func() map[string]bool) {
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	register := func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.stale_probe." + source, Source: source, Events: events, Ordering: handlers.EveryEvent, Batch: batch,
			Handler: handlers.HandlerFunc(func(_ context.Context, e *handlers.Event) error {
				mu.Lock()
				defer mu.Unlock()
				seen[e.DeliveryID] = e.Stale
				return nil
			}),
		}))
	}
	return register, func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]bool{}
		for k, v := range seen {
			out[k] = v
		}
		return out
	}
}

// Two changes to one issue within a second carry the same updated_at: the
// one received later wins, whichever is processed first.
func TestOrderingTiesGoByReceipt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	base := time.Now().Add(-time.Minute)

	later := b.deliverReceivedAt(t, "github", newID("gh"), "issues", issuePayload("acme/app", 11, "second change", at), time.Time{}, base.Add(time.Second))
	b.WaitStatus(t, later, "processed")
	earlier := b.deliverReceivedAt(t, "github", newID("gh"), "issues", issuePayload("acme/app", 11, "first change", at), time.Time{}, base)
	b.WaitStatus(t, earlier, "processed")

	require.Equal(t, "second change", b.mirror(t, "acme/app", 11).title, "received later, so newer")
	require.Contains(t, b.log.String(), "stale event passed over")

	// A replay of the newest event is not stale: it applies again.
	b.WaitJob(t, b.Replay(t, later))
	require.Equal(t, "second change", b.mirror(t, "acme/app", 11).title)
}

func pushPayload(ref string, pushedAt time.Time, headCommitAt time.Time) []byte {
	head := "null"
	if !headCommitAt.IsZero() {
		head = fmt.Sprintf(`{"id":"abc","timestamp":%q}`, headCommitAt.Format(time.RFC3339))
	}
	pushed := "null"
	if !pushedAt.IsZero() {
		pushed = fmt.Sprint(pushedAt.Unix())
	}
	return []byte(fmt.Sprintf(`{"ref":%q,"head_commit":%s,"repository":{"full_name":"acme/app","pushed_at":%s}}`, ref, head, pushed))
}

// Pushes are ordered by when they were pushed, not when they reached us:
// an old push redelivered late is stale.
func TestPushesAreOrderedByPushTime(t *testing.T) {
	t.Parallel()
	register, seen := staleProbe(t, "github", "push")
	b := setupWith(t, setupOpts{register: register})
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	newer, older, byCommit := newID("push"), newID("push"), newID("push")

	b.WaitStatus(t, b.deliver(t, "github", newer, "push", pushPayload("refs/heads/main", t0.Add(time.Minute), time.Time{}), time.Time{}), "processed")
	b.WaitStatus(t, b.deliver(t, "github", older, "push", pushPayload("refs/heads/main", t0, time.Time{}), time.Time{}), "processed")
	// Without pushed_at, the head commit's time orders it.
	b.WaitStatus(t, b.deliver(t, "github", byCommit, "push", pushPayload("refs/heads/main", time.Time{}, t0.Add(-time.Minute)), time.Time{}), "processed")
	require.Equal(t, map[string]bool{newer: false, older: true, byCommit: true}, seen())
}

// An event with no ordering time of its own is ordered by receipt, and
// receipt time is never compared with a provider's clock: a real newer
// event whose provider time is behind our receipt time is not stale.
func TestReceiptTimeIsNeverComparedWithProviderTime(t *testing.T) {
	t.Parallel()
	register, seen := staleProbe(t, "billing", "untimed", "timed")
	b := setupWith(t, setupOpts{register: register})
	now := time.Now()
	untimed1, untimed0, timed := newID("msg"), newID("msg"), newID("msg")

	b.WaitStatus(t, b.deliverReceivedAt(t, "billing", untimed1, "untimed", []byte(`{"type":"untimed","data":{"id":"res-mixed"}}`), time.Time{}, now), "processed")
	// The provider stamped this one a minute before we received the first.
	b.WaitStatus(t, b.deliverReceivedAt(t, "billing", timed, "timed", standardPayload("timed", "res-mixed", now.Add(-time.Minute)), now.Add(-time.Minute), now.Add(time.Second)), "processed")
	// Untimed events are ordered among themselves by receipt.
	b.WaitStatus(t, b.deliverReceivedAt(t, "billing", untimed0, "untimed", []byte(`{"type":"untimed","data":{"id":"res-mixed"}}`), time.Time{}, now.Add(-time.Second)), "processed")
	require.Equal(t, map[string]bool{untimed1: false, timed: false, untimed0: true}, seen())
}

// A processing batch records its resources' versions together at its end,
// one statement for each clock: deliveries of both clocks in one batch
// leave the versions they would alone, and later deliveries are judged
// against them.
func TestBatchRecordsVersionsOfBothClocks(t *testing.T) {
	t.Parallel()
	register, seen := staleProbeWith(t, true, "billing", "untimed", "timed")
	b := setupWith(t, setupOpts{register: register})
	ctx := context.Background()
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	untimed := func(resource string) []byte {
		return []byte(fmt.Sprintf(`{"type":"untimed","data":{"id":%q}}`, resource))
	}
	timed := func(resource string) ingest.Delivery {
		return ingest.Delivery{Source: "billing", DeliveryID: newID("msg"), EventType: "timed", OccurredAt: at,
			Payload: standardPayload("timed", resource, at)}
	}
	first := map[string]ingest.Delivery{
		"res-receipt-1":  {Source: "billing", DeliveryID: newID("msg"), EventType: "untimed", Payload: untimed("res-receipt-1")},
		"res-provider-1": timed("res-provider-1"),
		"res-receipt-2":  {Source: "billing", DeliveryID: newID("msg"), EventType: "untimed", Payload: untimed("res-receipt-2")},
		"res-provider-2": timed("res-provider-2"),
	}
	var ds []ingest.Delivery
	want := map[string]bool{} // stale, by delivery id
	for _, d := range first {
		ds = append(ds, d)
		want[d.DeliveryID] = false
	}
	ids := b.recordTogether(t, ds)
	for _, id := range ids {
		b.WaitStatus(t, id, "processed")
	}
	for key, d := range first {
		var (
			appliedAt, receiptAt *time.Time
			deliveryID           string
			receivedAt           time.Time
		)
		require.NoError(t, b.Pool.QueryRow(ctx, `
			SELECT v.applied_at, v.receipt_applied_at, v.delivery_id, i.received_at
			FROM resource_version v JOIN inbox i ON i.source = v.source AND i.delivery_id = v.delivery_id
			WHERE v.source = 'billing' AND v.resource_key = $1`, key).Scan(&appliedAt, &receiptAt, &deliveryID, &receivedAt))
		require.Equal(t, d.DeliveryID, deliveryID, key)
		if d.EventType == "timed" {
			require.NotNil(t, appliedAt, key)
			require.True(t, appliedAt.Equal(at), "%s: applied_at %s, want %s", key, appliedAt, at)
			require.Nil(t, receiptAt, key)
			continue
		}
		require.Nil(t, appliedAt, "%s: receipt time never lands in the provider clock", key)
		require.NotNil(t, receiptAt, key)
		require.True(t, receiptAt.Equal(receivedAt), "%s: receipt_applied_at %s, want the receipt time %s", key, receiptAt, receivedAt)
	}

	// Later deliveries are judged against those versions: older ones are
	// stale, newer ones are not.
	now := time.Now()
	later := []struct {
		eventType, key     string
		occurred, received time.Time
		stale              bool
	}{
		{"untimed", "res-receipt-1", time.Time{}, now.Add(-time.Hour), true},
		{"timed", "res-provider-1", at.Add(-time.Minute), now, true},
		{"untimed", "res-receipt-2", time.Time{}, now.Add(time.Second), false},
		{"timed", "res-provider-2", at.Add(time.Minute), now, false},
	}
	for _, l := range later {
		payload := untimed(l.key)
		if l.eventType == "timed" {
			payload = standardPayload("timed", l.key, l.occurred)
		}
		id := newID("msg")
		b.WaitStatus(t, b.deliverReceivedAt(t, "billing", id, l.eventType, payload, l.occurred, l.received), "processed")
		want[id] = l.stale
		// A stale delivery leaves the version as it was; a newer one moves it.
		versionBy := first[l.key].DeliveryID
		if !l.stale {
			versionBy = id
		}
		var got string
		require.NoError(t, b.Pool.QueryRow(ctx, "SELECT delivery_id FROM resource_version WHERE source = 'billing' AND resource_key = $1",
			l.key).Scan(&got))
		require.Equal(t, versionBy, got, l.key)
	}
	require.Equal(t, want, seen())
}

// The inbox row records whether processing found the delivery stale, in a
// batch and alone: operators see it (the admin API, the console).
func TestInboxRecordsStaleness(t *testing.T) {
	t.Parallel()
	for name, batchSize := range map[string]int{"batched": 0, "alone": 1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, setupOpts{batchSize: batchSize})
			t1 := time.Now().Add(-time.Hour).Truncate(time.Second)
			newer := b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/app", 21, "newer", t1.Add(time.Minute)), time.Time{})
			b.WaitStatus(t, newer, "processed")
			older := b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/app", 21, "older", t1), time.Time{})
			b.WaitStatus(t, older, "processed")
			untouched := b.deliver(t, "github", newID("gh"), "star", []byte(`{"action":"created","repository":{"full_name":"acme/app"}}`), time.Time{})
			b.WaitStatus(t, untouched, "skipped")

			stale := func(id int64) *bool {
				var s *bool
				require.NoError(t, b.Pool.QueryRow(context.Background(), "SELECT stale FROM delivery WHERE id = $1", id).Scan(&s))
				return s
			}
			require.NotNil(t, stale(newer))
			require.False(t, *stale(newer))
			require.NotNil(t, stale(older))
			require.True(t, *stale(older))
			require.Nil(t, stale(untouched), "no handler, no resource: not recorded")
		})
	}
}
