package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A stale event never moves its resource's version back. Delivered E3
// (the newest), then E1, then E2: E1 is stale against E3, and E2, newer
// than E1 but older than E3, is stale too only if E1 left the version
// where E3 put it. Every step checks the recorded version, so a version
// moved back by E1 shows there even before E2 is judged against it.
func TestResourceVersionOnlyMovesForward(t *testing.T) {
	t.Parallel()
	register, seen := staleProbe(t, "github", "issues")
	b := setupWith(t, setupOpts{register: register})
	ctx := context.Background()
	t1 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	t2, t3 := t1.Add(time.Minute), t1.Add(2*time.Minute)

	version := func() (deliveryID string, appliedAt time.Time) {
		t.Helper()
		require.NoError(t, b.Pool.QueryRow(ctx,
			"SELECT delivery_id, applied_at FROM resource_version WHERE source = 'github' AND resource_key = 'acme/app#31'").
			Scan(&deliveryID, &appliedAt))
		return deliveryID, appliedAt
	}
	staleColumn := func(inboxID int64) *bool {
		t.Helper()
		var s *bool
		require.NoError(t, b.Pool.QueryRow(ctx, "SELECT stale FROM delivery WHERE id = $1", inboxID).Scan(&s))
		return s
	}

	e3 := newID("gh")
	e3Row := b.deliver(t, "github", e3, "issues", issuePayload("acme/app", 31, "third", t3), time.Time{})
	b.WaitStatus(t, e3Row, "processed")
	byID, at := version()
	require.Equal(t, e3, byID)
	require.True(t, at.Equal(t3), "applied_at %s, want %s", at, t3)

	rows := map[string]int64{e3: e3Row}
	for _, e := range []struct {
		title string
		at    time.Time
	}{{"first", t1}, {"second", t2}} {
		id := newID("gh")
		rows[id] = b.deliver(t, "github", id, "issues", issuePayload("acme/app", 31, e.title, e.at), time.Time{})
		b.WaitStatus(t, rows[id], "processed")

		byID, at := version()
		require.Equal(t, e3, byID, "the %s event moved the version back", e.title)
		require.True(t, at.Equal(t3), "after the %s event: applied_at %s, want %s", e.title, at, t3)
		require.Equal(t, "third", b.mirror(t, "acme/app", 31).title, "after the %s event", e.title)
	}

	want := map[string]bool{}
	for id, row := range rows {
		want[id] = id != e3
		s := staleColumn(row)
		require.NotNil(t, s, id)
		require.Equal(t, id != e3, *s, "delivery %s: recorded staleness", id)
	}
	require.Equal(t, want, seen(), "what the handler was told")
	m := b.mirror(t, "acme/app", 31)
	require.Equal(t, e3, m.lastDelivery)
	require.True(t, m.updatedAt.Equal(t3))
}
