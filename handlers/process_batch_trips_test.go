package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/github"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A processing batch whose handlers only Defer is two round trips
// whatever its size: every delivery's lock and version, then everything
// that closes them (the deferred writes, the versions). A delivery whose
// handler runs a statement on its Tx adds two: what the batch carries,
// its savepoint last, then the statement.
func TestProcessBatchRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, trips := testdb.NewCounted(t)
	_, err := pool.Exec(ctx, "CREATE TABLE trips_effect (delivery_id text PRIMARY KEY)")
	require.NoError(t, err)
	reg := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{{Name: "github", Provider: "github"}}})
	require.NoError(t, github.RegisterIssueMirror(reg))
	require.NoError(t, reg.Register(handlers.Registration{
		Name: "test.own_statement", Provider: "github", Events: []string{"issues"}, Ordering: handlers.EveryEvent, PayloadOnly: true,
		Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
			if !strings.HasPrefix(e.Delivery.DeliveryID, "own-") {
				return nil
			}
			_, err := e.Tx.Exec(ctx, "INSERT INTO trips_effect VALUES ($1)", e.Delivery.DeliveryID)
			return err
		}),
	}))
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	batch := func(round, n, own int) [][]string {
		t.Helper()
		ds := make([]handlers.Delivery, n)
		for j := range ds {
			id := fmt.Sprintf("defer-%d-%d", round, j)
			if j < own {
				id = fmt.Sprintf("own-%d-%d", round, j)
			}
			updated := start.Add(time.Duration(round) * time.Second).Format(time.RFC3339)
			ds[j] = handlers.Delivery{Source: "github", Provider: "github", EventType: "issues", DeliveryID: id, ReceivedAt: time.Now(),
				Payload: fmt.Appendf(nil, `{"action":"edited","issue":{"number":%d,"title":"t","state":"open","updated_at":%q},"repository":{"full_name":"octo/repo","id":1}}`,
					round*100+j+1, updated)}
		}
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		trips.Reset()
		results, errs, err := reg.ProcessBatch(ctx, tx, nil, ds)
		sent := trips.Sent()
		require.NoError(t, err)
		for i := range ds {
			require.NoError(t, errs[i])
			require.Equal(t, handlers.OutcomeProcessed, results[i].Outcome)
		}
		require.NoError(t, tx.Commit(ctx))
		return sent
	}

	batch(0, 3, 1) // a connection's first batch prepares its statements
	for _, n := range []int{1, 8} {
		require.Equal(t, 2, len(batch(n, n, 0)), "%d deliveries, only deferred writes:\n%s", n, trips)
	}
	sent := batch(20, 8, 2)
	require.Equal(t, 2+2*2, len(sent), "8 deliveries, 2 with a statement of their own:\n%s", trips)
	for _, i := range []int{1, 3} {
		carry, own := sent[i], sent[i+1]
		require.Equal(t, "SAVEPOINT hookinbox_delivery", carry[len(carry)-1], "round trip %d:\n%s", i, trips)
		require.Equal(t, []string{"INSERT INTO trips_effect VALUES ($1)"}, own)
	}
	require.Contains(t, sent[len(sent)-1], "RELEASE SAVEPOINT hookinbox_delivery", "the last delivery's release travels with the flush")
}
