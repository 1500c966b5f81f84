package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The passes are measured against both alone phases, the one before the
// drop pass and the one after it; a results file without the second is
// measured against the first.
func TestRetentionBaselineBracketsTheDropPass(t *testing.T) {
	t.Parallel()
	phase := func(p99 time.Duration, seconds ...time.Duration) retentionPhase {
		p := retentionPhase{WALBytes: 1000, CPU: cpuUse{Seconds: 10, Postgres: 2, Service: 3}}
		p.Load.Requests, p.Load.Latency.P99 = 100, duration(p99)
		for _, s := range seconds {
			p.Load.SecondP99 = append(p.Load.SecondP99, duration(s))
		}
		return p
	}
	before := phase(8*time.Millisecond, 5*time.Millisecond, 6*time.Millisecond, 90*time.Millisecond)
	after := phase(12*time.Millisecond, 7*time.Millisecond, 8*time.Millisecond, 9*time.Millisecond)
	after.WALBytes, after.CPU.Seconds = 3000, 30

	b := baselineOf(before, after)
	require.Equal(t, duration(10*time.Millisecond), b.p99)
	require.Equal(t, duration(7*time.Millisecond), b.second, "the mean of the median seconds, 6 and 8 ms")
	require.InDelta(t, 100, b.walPerSec, 1e-9, "4,000 bytes in 40 s")
	require.InDelta(t, 0.25, b.cpuPerSec, 1e-9, "10 CPU seconds in 40 s")

	older := baselineOf(before, retentionPhase{})
	require.Equal(t, duration(8*time.Millisecond), older.p99)
	require.Equal(t, duration(6*time.Millisecond), older.second)
}
