package cli

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
	for _, name := range []string{"GOMEMLIMIT", "AUTOMEMLIMIT", "AUTOMEMLIMIT_EXPERIMENT"} {
		if _, set := os.LookupEnv(name); set {
			t.Skipf("%s is set in this test's environment, and automemlimit reads the real one", name)
		}
	}
	external := gcTuning{limits: container}

	tuneGC(unset, logger, external)
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100), "GOGC unset: serve's target")
	require.Equal(t, int64(float64(gib)*0.9), debug.SetMemoryLimit(math.MaxInt64), "90% of the container's limit")

	noLimit := func() (uint64, error) { return 0, memlimit.ErrNoLimit } // as FromCgroup outside a limited cgroup
	tuneGC(unset, logger, gcTuning{limits: noLimit})
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(serveMemLimit), debug.SetMemoryLimit(math.MaxInt64), "no container limit: serve's own")

	tuneGC(unset, logger, gcTuning{limits: container, embeddedDatabase: true})
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(serveMemLimit), debug.SetMemoryLimit(math.MaxInt64), "embedded PostgreSQL shares the container's limit: serve's own")

	tuneGC(func(k string) (string, bool) { return "150", k == "GOGC" }, logger, external)
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: left as the runtime applied it")
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOGC set: no limit either")

	tuneGC(func(k string) (string, bool) { return "off", k == "AUTOMEMLIMIT" }, logger, gcTuning{limits: noLimit})
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "AUTOMEMLIMIT=off: no limit at all")

	tuneGC(func(k string) (string, bool) { return "512MiB", k == "GOMEMLIMIT" }, logger, external)
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOMEMLIMIT set: the runtime's")
}
