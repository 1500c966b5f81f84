package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A database outage (or failover) silences every process for longer than
// the live window: when they publish again, in whatever order, the
// configurations keep their order, and the older one stays outdated.
// Only a process's first publish finds a silent configuration deployed
// again (TestGenerationNewestIsFirstSeenLast).
func TestADatabaseOutageDoesNotReorderConfigurations(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	ctx := context.Background()
	const every = time.Minute // no look of their own during the test: the test makes each
	older, _ := b.start("v1", every, nil)
	newer, _ := b.start("v2", every, nil)
	require.NoError(t, older.Cycle(ctx))
	require.True(t, older.Outdated())
	require.NoError(t, b.settle(newer, 10*time.Second))

	// Twice the live window (10 looks) of silence, as an outage leaves it.
	b.exec(`UPDATE worker_config SET seen_at = seen_at - interval '20 minutes',
		first_seen_at = first_seen_at - interval '20 minutes'`)
	b.exec(`UPDATE worker_process SET seen_at = seen_at - interval '20 minutes',
		live_until = live_until - interval '20 minutes', looked_at = looked_at - interval '20 minutes'`)
	require.NoError(t, newer.Cycle(ctx))
	require.NoError(t, older.Cycle(ctx))
	require.True(t, older.Outdated(), "v1 published last after the outage: still older than v2")
	require.NoError(t, newer.Cycle(ctx))
	require.False(t, newer.Outdated(), "v2 is still the newest")
}
