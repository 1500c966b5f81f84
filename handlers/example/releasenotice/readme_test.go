package releasenotice_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's "Write a handler" block is this package's file, to the byte:
// the example a reader copies is the one that compiles.
func TestREADMEShowsThisFile(t *testing.T) {
	t.Parallel()
	const (
		begin = "<!-- begin handlers/example/releasenotice/releasenotice.go -->\n```go\n"
		end   = "```\n<!-- end handlers/example/releasenotice/releasenotice.go -->"
	)
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	file, err := os.ReadFile("releasenotice.go")
	require.NoError(t, err)

	_, block, ok := strings.Cut(string(readme), begin)
	require.True(t, ok, "README.md has no %q", begin)
	block, _, ok = strings.Cut(block, end)
	require.True(t, ok, "README.md has no %q", end)
	require.Equal(t, string(file), block)
}
