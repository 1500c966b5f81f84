package pgembed

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindBinDir(t *testing.T) {
	t.Parallel()
	dir, err := FindBinDir()
	if err != nil {
		require.ErrorIs(t, err, ErrNoBinaries)
		t.Skip("no PostgreSQL installed")
	}
	require.True(t, hasServerBinaries(dir))
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil && hasServerBinaries(strings.TrimSpace(string(out))) {
		require.Equal(t, strings.TrimSpace(string(out)), dir)
	}
	if hasServerBinaries("/usr/lib/postgresql/15/bin") {
		require.Equal(t, "/usr/lib/postgresql/15/bin", dir)
	}
}

func TestHighestBinDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	install := func(version string, binaries ...string) {
		bin := filepath.Join(root, version, "bin")
		require.NoError(t, os.MkdirAll(bin, 0o755))
		for _, name := range binaries {
			require.NoError(t, os.WriteFile(filepath.Join(bin, name), nil, 0o755))
		}
	}
	install("9.6", "initdb", "postgres")
	install("10", "initdb", "postgres")
	install("15", "initdb", "postgres")
	install("16", "initdb") // client-only leftovers: no server

	require.Equal(t, filepath.Join(root, "15", "bin"), highestBinDir(filepath.Join(root, "*", "bin")))
	require.Empty(t, highestBinDir(filepath.Join(root, "none-*", "bin")))
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	require.Equal(t, []int{15}, parseVersion("15"))
	require.Equal(t, []int{9, 6}, parseVersion("9.6"))
	require.Equal(t, []int{16}, parseVersion("pgsql-16"))
	require.Nil(t, parseVersion("devel"))
	require.Positive(t, compareVersions([]int{10}, []int{9, 6}))
	require.Negative(t, compareVersions([]int{9}, []int{9, 6}))
	require.Zero(t, compareVersions([]int{15}, []int{15}))
}
