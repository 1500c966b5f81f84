package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// Which configuration is the newest: the one first seen last among those
// a live process runs. A replica of the old one that restarts stays
// outdated; once the new one stops running, the old one processes again;
// a configuration deployed again after it stopped running is the newest.
func TestGenerationNewestIsFirstSeenLast(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	const every = 50 * time.Millisecond
	start := func(fp string) (*jobs.Generation, context.CancelFunc) {
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		g, err := jobs.StartGeneration(ctx, pool, jobs.GenerationConfig{Fingerprint: fp, Every: every})
		require.NoError(t, err)
		return g, stop
	}
	eventually := func(cond func() bool, msg string) {
		t.Helper()
		require.Eventually(t, cond, 10*time.Second, every/2, msg)
	}

	v1, _ := start("v1")
	require.False(t, v1.Outdated(), "alone")
	v2, stopV2 := start("v2")
	require.False(t, v2.Outdated(), "the newest from its start")
	eventually(v1.Outdated, "v1 sees v2")

	v1again, _ := start("v1") // a replica of v1 restarts
	require.True(t, v1again.Outdated(), "a restart does not make v1 the newest")

	stopV2()
	eventually(func() bool { return !v1.Outdated() && !v1again.Outdated() }, "v2 stopped running: v1 processes again")

	v2, _ = start("v2") // deployed again
	require.False(t, v2.Outdated())
	eventually(v1.Outdated, "v2 is the newest again")
}

// Prepare, before a process says which configuration it runs: a replica of
// an older configuration that restarts is outdated before River fetches
// anything; a new configuration, or one no live process runs (a rollback),
// is not.
func TestGenerationPrepareBeforeRiverWorks(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	const every = 50 * time.Millisecond
	prepared := func(fp string) *jobs.Generation {
		g, err := jobs.NewGeneration(pool, jobs.GenerationConfig{Fingerprint: fp, Every: every})
		require.NoError(t, err)
		require.NoError(t, g.Prepare(context.Background()))
		return g
	}
	start := func(fp string) context.CancelFunc {
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		_, err := jobs.StartGeneration(ctx, pool, jobs.GenerationConfig{Fingerprint: fp, Every: every})
		require.NoError(t, err)
		return stop
	}

	require.False(t, prepared("v1").Outdated(), "the first configuration")
	stopV1 := start("v1")
	require.False(t, prepared("v2").Outdated(), "a new configuration: the newest once it says so")
	start("v2")
	require.True(t, prepared("v1").Outdated(), "a v1 replica restarting beside v2")
	require.False(t, prepared("v2").Outdated(), "a v2 replica restarting")

	stopV1()
	require.Eventually(t, func() bool { return !prepared("v1").Outdated() }, 10*time.Second, every,
		"v1 runs nowhere: deployed again it is the newest")
}
