package main

import (
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// Not parallel: the GC target is the process's.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	logger := slog.New(slog.DiscardHandler)

	tuneGC(func(string) (string, bool) { return "", false }, logger)
	require.Equal(t, serveGCPercent, debug.SetGCPercent(100), "GOGC unset: serve's target")

	tuneGC(func(k string) (string, bool) { return "150", k == "GOGC" }, logger)
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: left as the runtime applied it")
}
