package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

// registerDeferProbe adds a batchable handler for billing's "ok" and "fail"
// events: each writes a row on Tx, then defers two more; "fail" defers one
// that breaks a NOT NULL constraint.
func registerDeferProbe(t *testing.T) func(r *handlers.Registry) {
	return func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.defer_probe", Source: "billing", Events: []string{"ok", "fail"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				const insert = "INSERT INTO defer_effect (delivery_id, what) VALUES ($1, $2)"
				if _, err := e.Tx.Exec(ctx, insert, e.DeliveryID, "tx"); err != nil {
					return err
				}
				e.Defer(insert, e.DeliveryID, "deferred 1")
				if e.EventType == "fail" {
					e.Defer(insert, e.DeliveryID, nil)
				}
				e.Defer(insert, e.DeliveryID, "deferred 2")
				return nil
			}),
		}))
	}
}

// Deferred writes run after the handler's own statements, in the order
// queued, and commit with the delivery. One that fails fails its delivery
// alone, batched or not, its Tx writes with it: its neighbours' writes
// commit once.
func TestDeferredWritesCommitWithTheirDelivery(t *testing.T) {
	t.Parallel()
	for name, batchSize := range map[string]int{"batched": 0, "alone": 1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, setupOpts{register: registerDeferProbe(t), maxAttempts: 1, batchSize: batchSize})
			_, err := b.Pool.Exec(context.Background(),
				"CREATE TABLE defer_effect (seq bigserial PRIMARY KEY, delivery_id text NOT NULL, what text NOT NULL)")
			require.NoError(t, err)
			at := time.Now()
			var ps []probeDelivery
			// A failure in the middle, and last (carried into the batch's flush).
			for i, ev := range []string{"ok", "ok", "fail", "ok", "fail"} {
				ps = append(ps, probeDelivery{"billing", newID(ev), ev, standardPayload(ev, "r"+string(rune('a'+i)), at)})
			}
			ids := b.deliverTogether(t, ps)
			for _, p := range ps {
				want := map[string]string{"ok": "processed", "fail": "failed"}[p.eventType]
				b.WaitStatus(t, ids[p.id], want)
			}
			for _, p := range ps {
				rows, err := b.Pool.Query(context.Background(), "SELECT what FROM defer_effect WHERE delivery_id = $1 ORDER BY seq", p.id)
				require.NoError(t, err)
				var got []string
				for rows.Next() {
					var what string
					require.NoError(t, rows.Scan(&what))
					got = append(got, what)
				}
				require.NoError(t, rows.Err())
				if p.eventType == "ok" {
					require.Equal(t, []string{"tx", "deferred 1", "deferred 2"}, got, p.id)
					continue
				}
				require.Empty(t, got, "%s: a failed deferred write rolls back its delivery's writes", p.id)
				_, lastErr := b.Status(t, ids[p.id])
				require.NotNil(t, lastErr)
				require.Contains(t, *lastErr, `null value in column "what"`)
			}
			if batchSize == 0 {
				require.Contains(t, b.log.String(), "processing batch failed; its deliveries are processed one by one")
			}
		})
	}
}
