package handlers_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

func TestUnregisteredEventIsSkipped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", newID("gh"), "star", []byte(`{"action":"created","repository":{"full_name":"acme/app"}}`), time.Time{})
	b.WaitStatus(t, id, "skipped")
}

// A panicking handler fails its job, which River retries; the process
// keeps working other deliveries meanwhile.
func TestPanickingHandlerRetriesAndServiceKeepsRunning(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	b := setupWith(t, setupOpts{register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.panics_once", Source: "billing", Events: []string{"boom"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				if calls.Add(1) == 1 {
					panic("handler bug")
				}
				_, err := e.Tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS panic_effect (id text PRIMARY KEY); INSERT INTO panic_effect VALUES ('x')")
				return err
			}),
		}))
	}})
	at := time.Now()
	id := b.deliver(t, "billing", newID("msg"), "boom", standardPayload("boom", "r", at), at)
	other := b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/app", 1, "fine", at), time.Time{})

	b.WaitStatus(t, id, "processed")
	b.WaitStatus(t, other, "processed")
	require.Equal(t, int32(2), calls.Load())
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM panic_effect"), "the panicking attempt left nothing behind")
	var attempt int
	require.NoError(t, b.Pool.QueryRow(context.Background(),
		"SELECT attempt FROM river_job WHERE kind = 'process_delivery' AND (args->>'inbox_id')::bigint = $1", id).Scan(&attempt))
	require.Equal(t, 2, attempt)
	require.Contains(t, b.log.String(), "handler test.panics_once panicked: handler bug")
}

func TestHandlerErrorFailsDeliveryAfterLastAttempt(t *testing.T) {
	t.Parallel()
	var (
		calls  atomic.Int32
		broken atomic.Bool
	)
	broken.Store(true)
	b := setupWith(t, setupOpts{maxAttempts: 3, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.fails_while_broken", Source: "billing", Events: []string{"fails"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				calls.Add(1)
				if !broken.Load() {
					return nil
				}
				// A write before the error: it must roll back each time.
				if _, err := e.Tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS failed_effect (n int)"); err != nil {
					return err
				}
				return errors.New("downstream database is down")
			}),
		}))
	}})
	at := time.Now()
	id := b.deliver(t, "billing", newID("msg"), "fails", standardPayload("fails", "r", at), at)
	b.WaitStatus(t, id, "failed")
	_, lastErr := b.Status(t, id)
	require.NotNil(t, lastErr)
	require.Contains(t, *lastErr, "downstream database is down")
	require.Equal(t, int32(3), calls.Load())
	require.Equal(t, map[string]int{"discarded": 1}, b.WaitJobs(t, "process_delivery"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM pg_tables WHERE tablename = 'failed_effect'"))

	// Once the cause is fixed, a replay processes it and clears the error.
	broken.Store(false)
	require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id)))
	status, lastErr := b.Status(t, id)
	require.Equal(t, "processed", status)
	require.Nil(t, lastErr)
}

func TestPermanentErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	b := setupWith(t, setupOpts{register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.permanent", Source: "billing", Events: []string{"bad"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(context.Context, *handlers.Event) error {
				calls.Add(1)
				return handlers.Permanent(errors.New("payload lacks a customer"))
			}),
		}))
	}})
	at := time.Now()
	id := b.deliver(t, "billing", newID("msg"), "bad", standardPayload("bad", "r", at), at)
	b.WaitStatus(t, id, "failed")
	require.Equal(t, map[string]int{"cancelled": 1}, b.WaitJobs(t, "process_delivery"))
	require.Equal(t, int32(1), calls.Load())
}
