package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A phase counts the inserts that started in it, however long they took:
// one that waited out the migration's lock shows the whole hold.
func TestUpgradePhaseCountsInsertsByTheirStart(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &upgradeIngest{inserts: []upgradeInsert{
		{start: t0.Add(-time.Millisecond), latency: time.Hour},               // before the phase
		{start: t0, latency: 2 * time.Millisecond},                           //
		{start: t0.Add(time.Second), latency: 8 * time.Second, failed: true}, // waited for the lock
		{start: t0.Add(2 * time.Second), latency: time.Hour},                 // after it
	}}
	p := l.phase(t0, t0.Add(2*time.Second))
	require.Equal(t, insertPhase{Seconds: 2, Inserts: 2, Failed: 1, P99Ms: 8000, MaxMs: 8000}, p)
}
