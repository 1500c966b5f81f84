package sqlowner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/sqlowner"
)

// Find reads the Go and SQL files a guard is about, and none of the tests,
// fixtures, hidden or skipped directories, or other files.
func TestFindReadsCodeOnly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, f := range []string{"a/q.sql", "a/q.go", "a/q_test.go", "a/q.md", "a/testdata/q.sql", ".git/q.sql", "owner/q.sql", "owner/sub/q.go"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("SELECT 1 FROM owned"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "other.sql"), []byte("SELECT 1"), 0o644))

	found, err := sqlowner.Find(root, func(_ string, code []byte) bool { return strings.Contains(string(code), "owned") }, "owner")
	require.NoError(t, err)
	require.Equal(t, []string{"a/q.go", "a/q.sql"}, found)
}
