package stripe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// sagaFailure reads the step a failed saga failed at, and why.
func (b *testBundle) sagaFailure(t *testing.T, pi string) (step, lastError string) {
	t.Helper()
	var s, e *string
	require.NoError(t, b.Pool.QueryRow(context.Background(),
		"SELECT failed_step, last_error FROM payment_saga WHERE payment_intent = $1", pi).Scan(&s, &e))
	require.NotNil(t, s, "no failed step")
	require.NotNil(t, e, "no last error")
	return *s, *e
}

// requireOneKeyOneEffect checks that every request to path carried the
// same key, want, and that the downstream applied it once.
func (b *testBundle) requireOneKeyOneEffect(t *testing.T, path, want string, requests int) {
	t.Helper()
	reqs := b.downstream.Requests(path)
	require.Len(t, reqs, requests)
	for _, r := range reqs {
		require.Equal(t, want, r.Key)
	}
	require.Equal(t, map[string]int{want: 1}, b.downstream.Effects(path))
}

// A step's job exhausts its attempts against a failing downstream: the
// saga is failed at that step with the job's last error, not left waiting.
// A replay of the delivery resumes the step with the same key: the
// downstream applies it once. Of three replays at once, one resumes it; a
// later replay does nothing.
func TestSagaFailedStepResumesByReplay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		step, path, kind string
		refuse           bool // fulfillment refused, so the refund is the step that fails
		want             sagaState
	}{
		{"fulfill", "/fulfill", "stripe_fulfill", false, sagaState{state: "fulfilled", credits: 1, balance: 1500}},
		{"refund", "/v1/refunds", "stripe_refund", true, sagaState{state: "refunded", credits: 1, refunds: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.step, func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, setupOpts{maxAttempts: 2})
			if tc.refuse {
				b.downstream.SetFallback("/fulfill", downstreamstub.Refuse)
			}
			b.downstream.SetFallback(tc.path, downstreamstub.Fail)
			evt, pi, id := b.pay(t, 1500)

			b.waitSaga(t, pi, "failed")
			require.Equal(t, map[string]int{"discarded": 1}, b.WaitJobs(t, tc.kind))
			step, lastErr := b.sagaFailure(t, pi)
			require.Equal(t, tc.step, step)
			require.Contains(t, lastErr, "500 Internal Server Error")

			b.downstream.SetFallback(tc.path, downstreamstub.Apply)
			for _, job := range []int64{b.Replay(t, id), b.Replay(t, id), b.Replay(t, id)} {
				require.Equal(t, "completed", b.WaitJob(t, job))
			}
			s := b.waitSaga(t, pi, tc.want.state)
			require.Equal(t, 1, strings.Count(b.log.String(), "saga: failed step resumed with the same key"))
			require.Equal(t, tc.want, s)
			require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, tc.kind), "the same job ran again")
			key := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, tc.step)
			b.requireOneKeyOneEffect(t, tc.path, key, 3) // two failed attempts, then the resumed one

			require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id)))
			require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, tc.kind))
			require.Equal(t, s, b.saga(t, pi))
			require.Len(t, b.downstream.Requests(tc.path), 3, "a second replay does nothing")
			require.Len(t, b.downstream.Requests("/fulfill"), map[bool]int{false: 3, true: 1}[tc.refuse])
		})
	}
}

// The fulfillment job ends without its worker deciding it: an operator
// cancels it, or River's rescuer discards it after its process died on the
// last attempt. The sweep marks the saga failed; a replay resumes it.
func TestSagaSweepFailsASagaWhoseJobEnded(t *testing.T) {
	t.Parallel()
	end := map[string]func(b *testBundle, jobID int64) bool{
		// Cancelled as an operator does, through River, but only while the
		// job waits between attempts: the row lock keeps River's fetch
		// (SKIP LOCKED) from starting it meanwhile. A job cancelled while it
		// runs is cancelled in its worker, which then decides the saga
		// itself, not the sweep this test is about.
		"cancelled": func(b *testBundle, jobID int64) bool {
			ctx := context.Background()
			err := pgx.BeginFunc(ctx, b.Pool, func(tx pgx.Tx) error {
				var id int64
				if err := tx.QueryRow(ctx, `SELECT id FROM river_job
					WHERE id = $1 AND state IN ('available', 'retryable', 'scheduled') FOR UPDATE`, jobID).Scan(&id); err != nil {
					return err
				}
				_, err := b.Client.JobCancelTx(ctx, tx, jobID)
				return err
			})
			return err == nil
		},
		"discarded": func(b *testBundle, jobID int64) bool {
			tag, err := b.Pool.Exec(context.Background(), `UPDATE river_job SET state = 'discarded', finalized_at = now()
				WHERE id = $1 AND state IN ('available', 'retryable', 'scheduled')`, jobID)
			return err == nil && tag.RowsAffected() == 1
		},
	}
	for name, endJob := range end {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, setupOpts{sagaSweepEvery: 200 * time.Millisecond})
			b.downstream.SetFallback("/fulfill", downstreamstub.Fail)
			evt, pi, id := b.pay(t, 600)
			var jobID int64
			require.Eventually(t, func() bool {
				err := b.Pool.QueryRow(context.Background(),
					"SELECT id FROM river_job WHERE kind = 'stripe_fulfill' AND cardinality(errors) > 0").Scan(&jobID)
				return err == nil && endJob(b, jobID)
			}, 15*time.Second, 20*time.Millisecond)
			require.Equal(t, map[string]int{name: 1}, b.WaitJobs(t, "stripe_fulfill"))

			b.waitSaga(t, pi, "failed")
			step, lastErr := b.sagaFailure(t, pi)
			require.Equal(t, "fulfill", step)
			require.NotEmpty(t, lastErr)
			require.Contains(t, b.log.String(), "saga: its step's job ended; marked failed")

			b.downstream.SetFallback("/fulfill", downstreamstub.Apply)
			require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id)))
			b.waitSaga(t, pi, "fulfilled")
			key := handlers.DeriveKey("stripe", evt, stripe.SagaHandlerName, "fulfill")
			require.Equal(t, map[string]int{key: 1}, b.downstream.Effects("/fulfill"))
		})
	}
}
