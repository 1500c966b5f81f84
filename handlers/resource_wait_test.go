package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A burst of one resource's deliveries waits for the resource with one
// pool connection, not one each: intake and other resources go on. With
// a connection each, eight waiting deliveries take a pool of six, and
// nothing else is recorded or processed until the resource is free.
func TestDeliveriesWaitingForAResourceLeaveThePoolToOthers(t *testing.T) {
	t.Parallel()
	var (
		release           = make(chan struct{})
		entered           = make(chan struct{}, 16)
		inside, maxInside atomic.Int32
		releaseOnce       atomic.Bool
	)
	b := setupWith(t, setupOpts{maxConns: 6, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.hot", Source: "billing", Events: []string{"hot.event"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(_ context.Context, e *handlers.Event) error {
				if e.Resource.Key != "hot" {
					return nil
				}
				n := inside.Add(1)
				defer inside.Add(-1)
				for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
				}
				entered <- struct{}{}
				select {
				case <-release:
					return nil
				case <-time.After(30 * time.Second):
					return handlers.Permanent(errors.New("the test never released the resource"))
				}
			}),
		}))
	}})
	t.Cleanup(func() {
		if releaseOnce.CompareAndSwap(false, true) {
			close(release)
		}
	})
	// The test's own connections: the pool under test may have none.
	observer, err := pgxpool.New(context.Background(), b.Pool.Config().ConnString())
	require.NoError(t, err)
	t.Cleanup(observer.Close)

	at := time.Now().Truncate(time.Second)
	hot := make([]int64, 8)
	tx, err := b.Pool.Begin(context.Background())
	require.NoError(t, err)
	for i := range hot {
		rec, err := b.Inbox.RecordTx(context.Background(), tx, hotDelivery("hot", at))
		require.NoError(t, err)
		hot[i] = rec.ID
	}
	require.NoError(t, tx.Commit(context.Background()))

	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery of the resource ever ran")
	}
	waitRunning(t, observer, len(hot))
	testdb.WaitLockWaiters(t, observer, 1, "one delivery waits in the database for the resource, the others outside it")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cold, err := b.Inbox.Record(ctx, hotDelivery("cold", at))
	require.NoError(t, err, "intake got no connection while one resource's deliveries waited")
	b.WaitStatus(t, cold.ID, "processed")
	require.Equal(t, int32(1), inside.Load(), "the resource was still held while another was processed")

	releaseOnce.Store(true)
	close(release)
	for _, id := range hot {
		b.WaitStatus(t, id, "processed")
	}
	require.Equal(t, int32(1), maxInside.Load(), "never two deliveries of one resource at once")
}

func hotDelivery(resource string, at time.Time) ingest.Delivery {
	return ingest.Delivery{Source: "billing", DeliveryID: newID("msg"), EventType: "hot.event", OccurredAt: at,
		Payload: standardPayload("hot.event", resource, at), Headers: http.Header{"Content-Type": {"application/json"}}}
}

// waitRunning waits until n process_delivery jobs run.
func waitRunning(t *testing.T, observer *pgxpool.Pool, n int) {
	t.Helper()
	var got int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		require.NoError(t, observer.QueryRow(context.Background(),
			"SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND state = 'running'").Scan(&got))
		if got == n {
			return
		}
	}
	t.Fatalf("%d deliveries' jobs run, want %d", got, n)
}
