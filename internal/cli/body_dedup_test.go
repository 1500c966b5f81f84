package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The shipped config's github source dedupes bodies: the same file sent
// under a new id (a captured request replayed) is a duplicate of the
// first, under any event type, while a built-in sample sent with --new-id
// is a new event.
func TestServeDedupesAGitHubBodyUnderANewID(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.URL(t))
	b.serve(t)
	file := filepath.Join(t.TempDir(), "issue.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"action":"opened","issue":{"number":99,"title":"replayed"}}`), 0o600))

	code, out := b.send(t, "--source", "github", "--event", "issues", "--file", file, "--new-id")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")
	code, out = b.send(t, "--source", "github", "--event", "issues", "--file", file, "--new-id")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "200 OK")
	require.Contains(t, out, `"status":"duplicate"`)
	require.Contains(t, out, `"duplicate_of":"`)
	// X-GitHub-Event is not signed: under another event type the body is
	// still the same event.
	code, out = b.send(t, "--source", "github", "--event", "x-replay-1", "--file", file, "--new-id")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `"status":"duplicate"`)

	for range 2 {
		code, out = b.send(t, "--source", "github", "--event", "issues", "--new-id")
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "202 Accepted")
	}
}
