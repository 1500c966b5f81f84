package releasenotice_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The "Write a handler" block (docs/handlers.md) is this package's file, to
// the byte: the example a reader copies is the one that compiles. Every
// page that shows the file, the README's or one in docs/, shows all of it.
func TestDocsShowThisFile(t *testing.T) {
	t.Parallel()
	const (
		begin = "<!-- begin handlers/example/releasenotice/releasenotice.go -->\n```go\n"
		end   = "```\n<!-- end handlers/example/releasenotice/releasenotice.go -->"
	)
	file, err := os.ReadFile("releasenotice.go")
	require.NoError(t, err)
	pages, err := filepath.Glob("../../../docs/*.md")
	require.NoError(t, err)
	pages = append([]string{"../../../README.md"}, pages...)

	shown := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		require.NoError(t, err)
		rest := string(raw)
		for {
			var block string
			var ok bool
			if _, rest, ok = strings.Cut(rest, begin); !ok {
				break
			}
			block, rest, ok = strings.Cut(rest, end)
			require.True(t, ok, "%s has %q but no %q", page, begin, end)
			require.Equal(t, string(file), block, "%s", page)
			shown++
		}
	}
	require.Positive(t, shown, "no page has %q", begin)
	raw, err := os.ReadFile("../../../docs/handlers.md")
	require.NoError(t, err)
	require.Contains(t, string(raw), begin, "docs/handlers.md's \"Write a handler\" shows the file")
}
