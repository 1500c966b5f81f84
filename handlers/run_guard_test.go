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

// A run River has given away (taken for stuck, fetched again) must not
// complete the live attempt, in a transaction of its own as in a batch:
// its effects roll back and the run River holds decides the delivery.
func TestStaleRunAloneDoesNotCompleteTheLiveAttempt(t *testing.T) {
	t.Parallel()
	var (
		calls atomic.Int32
		b     *testBundle
	)
	b = setupWith(t, setupOpts{maxAttempts: 3, batchSize: 1, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.stale_run", Source: "billing", Events: []string{"taken"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				call := calls.Add(1)
				if call == 1 {
					// What River's rescue and a new fetch do to the job row.
					if _, err := b.Pool.Exec(ctx, `UPDATE river_job SET attempt = attempt + 1
						WHERE kind = 'process_delivery' AND (args->>'inbox_id')::bigint = $1`, e.InboxID); err != nil {
						return err
					}
				}
				_, err := e.Tx.Exec(ctx, "INSERT INTO run_effect VALUES ($1, $2)", e.DeliveryID, call)
				return err
			}),
		}))
	}})
	_, err := b.Pool.Exec(context.Background(), "CREATE TABLE run_effect (delivery_id text, call int)")
	require.NoError(t, err)
	id := newID("taken")
	inboxID := b.deliver(t, "billing", id, "taken", standardPayload("taken", "stale-run", time.Now()), time.Now())
	b.WaitStatus(t, inboxID, "processed")
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM run_effect WHERE call = 1"), "the stale run's effects rolled back")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM run_effect"), "one effect in all")
	require.Contains(t, b.log.String(), "delivery not processed by this run")
}

// A run that fails after another run processed the row (a replay running
// alongside it) leaves the row processed: it must not end failed.
func TestFailedRunDoesNotUndoAConcurrentReplaysOutcome(t *testing.T) {
	t.Parallel()
	var (
		calls   atomic.Int32
		release = make(chan struct{})
	)
	b := setupWith(t, setupOpts{maxAttempts: 1, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.replay_race", Source: "billing", Events: []string{"race"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				if calls.Add(1) == 1 {
					<-release // holds the resource lock: the replay waits for it
					return nil
				}
				return handlers.Permanent(errors.New("the replay fails"))
			}),
		}))
	}})
	// A delivery no handler takes, finished before the failing run: its
	// outcome is its own.
	bystander := b.deliver(t, "billing", newID("other"), "other", standardPayload("other", "bystander", time.Now()), time.Now())
	b.WaitStatus(t, bystander, "processed")
	inboxID := b.deliver(t, "billing", newID("race"), "race", standardPayload("race", "replay-race", time.Now()), time.Now())
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
	replayJob := b.Replay(t, inboxID)
	// The replay's attempt has begun and waits for the resource lock.
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM river_job WHERE id = $1 AND state = 'running'", replayJob) == 1
	}, 10*time.Second, 10*time.Millisecond)
	close(release)

	require.Equal(t, "cancelled", b.WaitJob(t, replayJob), "the replay failed permanently")
	status, _ := b.Status(t, inboxID)
	require.Equal(t, "processed", status, "processed after the failing run began: that outcome stands")
	require.EqualValues(t, 2, calls.Load())
	status, _ = b.Status(t, bystander)
	require.Equal(t, "processed", status, "another delivery's failure is not this one's")
}
