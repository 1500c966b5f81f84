package hookinbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testproc"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// readmeLibrary returns the library steps as a user copies them, from the
// README's "Use hookinbox as a library" (or wherever among README.md and
// docs/*.md they live): the shell block that makes the module, its
// main.go, and the block that builds it and writes its config.
func readmeLibrary(t *testing.T) (setup, mainGo, build string) {
	t.Helper()
	var raw []byte
	for _, page := range docPages(t) {
		raw = append(raw, readText(t, page)...)
	}
	block := func(name, lang string) string {
		re := regexp.MustCompile("(?s)<!-- begin library " + regexp.QuoteMeta(name) + " -->\n```" + lang + "\n(.*?)```\n<!-- end library " + regexp.QuoteMeta(name) + " -->")
		ms := re.FindAllSubmatch(raw, -1)
		require.Len(t, ms, 1, "README.md and docs/*.md have one library %s block", name)
		return string(ms[0][1])
	}
	return block("setup", "sh"), block("main.go", "go"), block("build", "sh")
}

func freeAddr(t *testing.T) string { return testproc.FreeAddr(t) }

// What a user does: the README's library steps, run as written from a
// clone (a copy of this checkout) into a new module beside it, then its
// binary serving with the config its init wrote, its own handler and its
// own table.
func TestOutsideModuleUsesTheLibrary(t *testing.T) {
	t.Parallel()
	setupSh, mainGo, buildSh := readmeLibrary(t)
	parent := t.TempDir()
	clone := filepath.Join(parent, "hookinbox")
	copyCheckout(t, clone)
	dir := filepath.Join(parent, "myinbox")

	// The builds below read the module cache; fill it as .ci/run does, or
	// a fresh machine's first go test ./... fails here (a dependency's
	// go.mod names modules the build never compiles).
	download := exec.Command("go", "mod", "download")
	download.Dir = clone
	downloaded, err := download.CombinedOutput()
	require.NoError(t, err, "go mod download:\n%s", downloaded)

	sh := func(where, script string) string {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = where
		// Offline: the module cache already holds everything. GOWORK is
		// the user's default (the go.work the steps write), whatever this
		// test's caller set.
		cmd.Env = append(withoutEnv(os.Environ(), "GOWORK", "GOFLAGS"), "GOPROXY=off", "GOSUMDB=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "in %s:\n%s\n%s", where, script, out)
		return string(out)
	}
	sh(clone, setupSh)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(mainGo), 0o644))
	initOut := sh(dir, buildSh)
	require.Contains(t, initOut, "wrote hookinbox.yaml (mode 0600)")
	require.Contains(t, initOut, "next: ./myinbox serve")
	bin := filepath.Join(dir, "myinbox")

	dbURL := testdb.URL(t)
	listen := freeAddr(t)
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "HOOKINBOX_LISTEN="+listen, "HOOKINBOX_ADMIN_LISTEN="+freeAddr(t))

	serve := exec.Command(bin, "serve")
	serve.Dir, serve.Env = dir, env
	testproc.Start(t, serve)
	testproc.WaitReady(t, "http://"+listen+"/readyz", 90*time.Second)

	send := exec.Command(bin, "send", "--source", "github", "--event", "issues")
	send.Dir, send.Env = dir, env
	out, err := send.CombinedOutput()
	require.NoError(t, err, "%s", out)

	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool {
		var n int
		_ = pool.QueryRow(context.Background(), "SELECT count(*) FROM seen_issue WHERE title <> ''").Scan(&n)
		return n == 1
	}, 30*time.Second, 20*time.Millisecond, "its handler ran")
	var version int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT version FROM hookinbox_app_migration").Scan(&version))
	require.Equal(t, 1, version)
}

// withoutEnv drops the named variables from environ.
func withoutEnv(environ []string, names ...string) []string {
	var kept []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			kept = append(kept, kv)
		}
	}
	return kept
}
