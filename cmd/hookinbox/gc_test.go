package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/stretchr/testify/require"
)

// Not parallel: the GC target and memory limit are the process's.
func TestTuneGC(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	logger := slog.New(slog.DiscardHandler)
	unset := func(string) (string, bool) { return "", false }
	var gib uint64 = 1 << 30
	container := memlimit.Limit(gib) // a 1 GiB cgroup limit
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set in this test's environment, and automemlimit reads the real one")
	}

	tuneGC(unset, logger, container)
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100), "GOGC unset: serve's target")
	require.Equal(t, int64(float64(gib)*0.9), debug.SetMemoryLimit(math.MaxInt64), "90% of the container's limit")

	noLimit := func() (uint64, error) { return 0, memlimit.ErrNoLimit } // as FromCgroup outside a limited cgroup
	tuneGC(unset, logger, noLimit)
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "no limit: none set")

	tuneGC(func(k string) (string, bool) { return "150", k == "GOGC" }, logger, container)
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: left as the runtime applied it")
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOGC set: no limit either")

	tuneGC(func(k string) (string, bool) { return "512MiB", k == "GOMEMLIMIT" }, logger, container)
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOMEMLIMIT set: the runtime's")
}
