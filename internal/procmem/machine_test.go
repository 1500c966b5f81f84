package procmem

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemTotal(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(24_638_128)<<10, memTotal("MemTotal:       24638128 kB\nMemFree:         1000 kB\n"))
	require.Zero(t, memTotal(""), "no /proc/meminfo")
	require.Zero(t, memTotal("MemTotal: lots\n"))
}

func TestUsableMemory(t *testing.T) {
	t.Parallel()
	machine := MachineMemory()
	require.Positive(t, machine)
	m := UsableMemory()
	require.Positive(t, m)
	require.LessOrEqual(t, m, machine, "a container's limit can only lower it")
}
