package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCPULeftByTraffic takes the drain's CPU beyond the paused loop's over
// the sends of the same loop: one run's figures, from its results file.
func TestCPULeftByTraffic(t *testing.T) {
	t.Parallel()
	tr := destTraffic{LoopSent: 51_514, SentPerSec: 2_577,
		PausedCPU:   cpuUse{Seconds: 20.03, MachineBusy: 0.6397},
		DrainingCPU: cpuUse{Seconds: 20.05, MachineBusy: 0.8672}}
	l, ok := cpuLeftByTraffic(tr, 2)
	require.True(t, ok)
	require.InDelta(t, 0.72, l.cores, 0.01)
	require.InDelta(t, 0.177, l.perSendMs, 0.001) // 9.12 s of the machine's CPU for 51,514 sends
	require.InDelta(t, 4_070, l.carries, 20)
	require.InDelta(t, 0.63, tr.SentPerSec/l.carries, 0.01)

	_, ok = cpuLeftByTraffic(destTraffic{LoopSent: 100, PausedCPU: tr.PausedCPU, DrainingCPU: tr.PausedCPU}, 2)
	require.False(t, ok, "a drain that used no more CPU than the paused loop carries nothing to compare")
}

// TestWhileDrainingEndsWithTheHeldBacklog leaves out the seconds of the
// second loop after the held sends were all sent.
func TestWhileDrainingEndsWithTheHeldBacklog(t *testing.T) {
	t.Parallel()
	ms := func(n int) duration { return duration(time.Duration(n) * time.Millisecond) }
	tr := destTraffic{Draining: loadResult{SecondP99: []duration{ms(30), ms(40), ms(50), ms(5), ms(5), ms(5)}},
		DrainedAfter: duration(2500 * time.Millisecond)}
	require.Equal(t, ms(40), medianSecondP99(tr.whileDraining()), "the median of the first three seconds")
	tr.DrainedAfter = 0
	require.Equal(t, ms(30), medianSecondP99(tr.whileDraining()), "not drained: the whole loop")
	tr.DrainedAfter = duration(time.Minute)
	require.Len(t, tr.whileDraining().SecondP99, 6)
}
