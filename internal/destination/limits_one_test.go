package destination

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

// A destination of one slot sends, one request at a time, and its slot
// goes next to the sender that waited for it, not back to the sender
// that just freed it: two replicas share it.
func TestMaxInFlightOfOneSendsAndServesTheWaitingSender(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A long timeout: claims and the waiting mark outlast a loaded machine's pauses.
	d := &dest{Destination: config.Destination{Name: "app", MaxInFlight: 1, Timeout: config.Duration(time.Minute)}}
	s, _ := setupCycle(t, d, 3)

	_, a, err := s.recordAndClaim(ctx, d, "a", "a/1", nil, 1, false)
	require.NoError(t, err)
	require.Len(t, a.sends, 1, "the one slot is free: a claim takes it")
	_, b, err := s.recordAndClaim(ctx, d, "b", "b/1", nil, 1, false)
	require.NoError(t, err)
	require.Empty(t, b.sends, "the slot is a's")
	require.Positive(t, b.retryIn)

	made := []result{{send: a.sends[0], res: response{at: time.Now(), status: 200}}}
	_, a, err = s.recordAndClaim(ctx, d, "a", "a/2", made, 1, false)
	require.NoError(t, err)
	require.Empty(t, a.sends, "the freed slot is left to b, which waits for it")
	_, b, err = s.recordAndClaim(ctx, d, "b", "b/2", nil, 1, false)
	require.NoError(t, err)
	require.Len(t, b.sends, 1, "b takes the slot it waited for")
}

// A rate limit of one a second or less hands out slots from the shared
// clock like any other: a claim's sends are a slot apart, and the next
// claim, another replica's, waits for the slot after them.
func TestARateLimitOfOneASecondOrLessMovesTheSharedClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, rate := range []float64{1, 0.5} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			t.Parallel()
			d := &dest{Destination: config.Destination{Name: "app", MaxInFlight: 4, Timeout: config.Duration(time.Second),
				RateLimit: rate}}
			s, pool := setupCycle(t, d, 4)
			slot := time.Duration(float64(time.Second) / rate)

			_, a, err := s.recordAndClaim(ctx, d, "a", "a/1", nil, 4, false)
			require.NoError(t, err)
			require.NotEmpty(t, a.sends)
			for i := 1; i < len(a.sends); i++ {
				require.Equal(t, slot, a.sends[i].startAt.Sub(a.sends[i-1].startAt), "send %d starts a slot after the one before", i)
			}
			var ahead time.Duration
			require.NoError(t, pool.QueryRow(ctx, `SELECT next_send_at - clock_timestamp() FROM destination_state
				WHERE destination = 'app'`).Scan(&ahead))
			require.Positive(t, ahead, "the shared clock moved past the claim's slots")

			_, b, err := s.recordAndClaim(ctx, d, "b", "b/1", nil, 4, false)
			require.NoError(t, err)
			if len(b.sends) == 0 {
				require.Positive(t, b.retryIn, "b waits for the slot after a's")
				return
			}
			// A loaded machine took a slot's length between the claims:
			// b's sends still start after a's. The margin is the drift
			// between two claims' mappings of the database's clock.
			last := a.sends[len(a.sends)-1].startAt
			require.False(t, b.sends[0].startAt.Before(last.Add(slot-100*time.Millisecond)), "b's first send takes the slot after a's last")
		})
	}
}
