package procmem

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReadOwnProcess(t *testing.T) {
	t.Parallel()
	rss, peak, err := Read(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, rss)
	require.GreaterOrEqual(t, peak, rss)
	_, _, err = Read(-1)
	require.Error(t, err)
}

func TestCPUOfOwnProcess(t *testing.T) {
	t.Parallel()
	before, err := CPU(os.Getpid(), false)
	require.NoError(t, err)
	// Spin until the count moves: it grows in 10 ms ticks, and a busy
	// machine may give this test little of its time.
	after := before
	for start := time.Now(); after == before && time.Since(start) < 10*time.Second; {
		after, err = CPU(os.Getpid(), true)
		require.NoError(t, err)
	}
	require.Greater(t, after, before)
	_, err = CPU(-1, false)
	require.Error(t, err)
}
