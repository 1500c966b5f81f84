package pgembed

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSharedBuffersFor(t *testing.T) {
	t.Parallel()
	const mb, gb = 1 << 20, 1 << 30
	for _, tc := range []struct {
		memory, want int64
	}{
		{0, 128 * mb},                  // unknown: PostgreSQL's default
		{512 * mb, 128 * mb},           // a small container: never below the default
		{2 * gb, 256 * mb},             // an eighth
		{4 * gb, 512 * mb},             // an eighth, the most
		{64 * gb, 512 * mb},            // a large machine: capped
		{3*gb + 100*mb, 396*mb + mb/2}, // an eighth, not rounded here
	} {
		require.Equal(t, tc.want, sharedBuffersFor(tc.memory), "memory %d MB", tc.memory/mb)
	}
}

func TestMemTotal(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(24_638_128)<<10, memTotal("MemTotal:       24638128 kB\nMemFree:         1000 kB\n"))
	require.Zero(t, memTotal(""), "no /proc/meminfo")
	require.Zero(t, memTotal("MemTotal: lots\n"))
}

func TestUsableMemory(t *testing.T) {
	t.Parallel()
	machine := memTotal(readText("/proc/meminfo"))
	require.Positive(t, machine)
	m := usableMemory()
	require.Positive(t, m)
	require.LessOrEqual(t, m, machine, "a container's limit can only lower it")
}
