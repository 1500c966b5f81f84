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
