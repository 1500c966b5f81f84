package jobs

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// A delivery that failed in its batch job's third attempt is retried by a
// job of its own that goes on from there: its attempts are the ones left,
// and River's default backoff (attempt⁴ seconds) continues at the fourth
// attempt instead of starting over at 1 s.
func TestRetryFromBatchFollowsOnTheBatchJobsAttempts(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(81 * time.Second)
	p := retryFromBatch(7, at, 3, 25)
	require.Equal(t, ProcessDeliveryArgs{InboxID: 7}, p.Args)
	require.Equal(t, 22, p.InsertOpts.MaxAttempts)
	require.Equal(t, at, p.InsertOpts.ScheduledAt)
	require.Equal(t, []string{TagFromBatch}, p.InsertOpts.Tags)
	require.True(t, json.Valid(p.InsertOpts.Metadata), "%s", p.InsertOpts.Metadata)

	w := &processDeliveryWorker{retry: &river.DefaultClientRetryPolicy{}}
	delay := func(row *rivertype.JobRow) time.Duration {
		next := w.NextRetry(&river.Job[ProcessDeliveryArgs]{JobRow: row})
		if next.IsZero() {
			return 0
		}
		return time.Until(next)
	}
	within := func(d time.Duration, seconds float64) {
		t.Helper()
		base := time.Duration(seconds * float64(time.Second))
		require.InDelta(t, base.Seconds(), d.Seconds(), 0.11*base.Seconds(), "River's jitter is 10%%")
	}
	row := &rivertype.JobRow{Attempt: 1, MaxAttempts: 22, Metadata: p.InsertOpts.Metadata}
	within(delay(row), 256) // 4⁴: its first own attempt is the delivery's fourth
	row.Attempt, row.Errors = 2, []rivertype.AttemptError{{Attempt: 1, Error: "boom"}}
	within(delay(row), 625) // 5⁴

	require.Zero(t, delay(&rivertype.JobRow{Attempt: 1, MaxAttempts: 25}), "any other job: the client's policy")
	require.Zero(t, delay(&rivertype.JobRow{Attempt: 1, MaxAttempts: 25, Metadata: []byte(`{"other":1}`)}))
	require.Zero(t, fromBatch(7, true).InsertOpts.MaxAttempts, "a job that runs at once gets the client's attempts")
	require.Equal(t, ProcessDeliveryArgs{InboxID: 7, Alone: true}, fromBatch(7, true).Args)
}
