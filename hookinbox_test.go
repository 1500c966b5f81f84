package hookinbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testproc"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// readmeLibrary returns the README's library main.go and its migration,
// as a user copies them.
func readmeLibrary(t *testing.T) (mainGo, migrationName, migrationSQL string) {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(raw)
	block := regexp.MustCompile("(?s)<!-- begin library main.go -->\n```go\n(.*?)```\n<!-- end library main.go -->").FindStringSubmatch(readme)
	require.NotNil(t, block, "README.md has no library main.go block")
	mig := regexp.MustCompile(`echo '([^']+)' > migrations/(\S+)`).FindStringSubmatch(readme)
	require.NotNil(t, mig, "README.md has no migration for the library example")
	return block[1], mig[2], mig[1]
}

func freeAddr(t *testing.T) string { return testproc.FreeAddr(t) }

// What a user does: a module outside this repository whose main.go is the
// README's, built against this checkout (replace stands in for go get),
// serving with its own handler and table.
func TestOutsideModuleUsesTheLibrary(t *testing.T) {
	t.Parallel()
	mainGo, migName, migSQL := readmeLibrary(t)
	checkout, err := filepath.Abs(".")
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("go.mod", fmt.Sprintf("module example.com/myinbox\n\ngo 1.26.0\n\nrequire github.com/hookinbox/hookinbox v0.0.0\n\nreplace github.com/hookinbox/hookinbox => %s\n", checkout))
	sum, err := os.ReadFile("go.sum")
	require.NoError(t, err)
	write("go.sum", string(sum)) // every module it needs is one of ours
	write("main.go", mainGo)
	write("migrations/"+migName, migSQL+"\n")

	// The offline build below reads the module cache; fill it as .ci/run
	// does, or a fresh machine's first go test ./... fails here (a
	// dependency's go.mod names modules the build never compiles).
	download := exec.Command("go", "mod", "download")
	download.Dir = checkout
	downloaded, err := download.CombinedOutput()
	require.NoError(t, err, "go mod download:\n%s", downloaded)

	goCmd := func(args ...string) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// Offline: the module cache already holds everything (go mod download).
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v:\n%s", args, out)
	}
	// go build -mod=mod adds the requirements the build needs, as go get
	// does; go mod tidy would also want the dependencies' test-only ones.
	goCmd("build", "-o", "myinbox", ".")
	bin := filepath.Join(dir, "myinbox")

	dbURL := testdb.URL(t)
	listen := freeAddr(t)
	committed, err := os.ReadFile("hookinbox.yaml")
	require.NoError(t, err)
	write("hookinbox.yaml", string(committed)) // "this repository's is a start"
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
