package procmem

import (
	"os"
	"testing"

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
