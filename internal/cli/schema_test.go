package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// A serve that has not yet seen the schema it expects (here: one migration
// missing, with --migrate=false waiting for someone else to apply it)
// must not store or acknowledge deliveries, though the tables are there.
func TestIngestRefusesUntilTheSchemaIsVerified(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.URL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	// 005 (payload compression) applies again cleanly when migrate runs.
	_, err = pool.Exec(ctx, "DELETE FROM hookinbox_migration WHERE version = 5")
	require.NoError(t, err)

	b := setup(t, url)
	exited := b.start(t, "--migrate=false")
	require.Eventually(t, func() bool { return strings.Contains(b.stderr.String(), "not ready, retrying") },
		20*time.Second, 20*time.Millisecond, "log:\n%s", b.stderr)

	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "503 Service Unavailable")
	require.Contains(t, out, `"code":"unavailable"`)
	var rows int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM inbox").Scan(&rows))
	require.Zero(t, rows)

	// Someone migrates; serve notices by itself.
	migrateOut := &testlog.Buffer{}
	e := b.env
	e.stderr = migrateOut
	require.Equal(t, 0, run(ctx, []string{"migrate", "--config", b.configPath}, e), migrateOut.String())
	b.waitReady(t, exited)
	code, out = b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")
}

// The handler example once told users to add migrations/003_release_notice.up.sql,
// which clashes with 003_inbox_origin. serve must stop with both names,
// not retry forever while ingest answers. The binary is built with that
// file added through an overlay, as a user's checkout would have it.
func TestServeStopsOnMigrationVersionClash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sql := filepath.Join(dir, "003_release_notice.up.sql")
	require.NoError(t, os.WriteFile(sql, []byte("CREATE TABLE release_notice (repo text, tag text, PRIMARY KEY (repo, tag));\n"), 0o600))
	migrationsDir, err := filepath.Abs(filepath.Join("..", "..", "migrations"))
	require.NoError(t, err)
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(migrationsDir, "003_release_notice.up.sql"): sql}})
	require.NoError(t, err)
	overlayPath := filepath.Join(dir, "overlay.json")
	require.NoError(t, os.WriteFile(overlayPath, overlay, 0o600))
	bin := filepath.Join(dir, "hookinbox")
	build, err := exec.Command("go", "build", "-overlay", overlayPath, "-o", bin, "../../cmd/hookinbox").CombinedOutput()
	require.NoError(t, err, "%s", build)

	b := setup(t, testdb.URL(t))
	for _, args := range [][]string{{"serve"}, {"serve", "--migrate=false"}, {"migrate"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, append(args, "--config", b.configPath)...)
		cmd.Env = append(os.Environ(), "HOOKINBOX_LISTEN="+b.listen, "HOOKINBOX_ADMIN_LISTEN="+b.adminAddr,
			"HOOKINBOX_ADMIN_TOKEN="+adminToken, "DATABASE_URL="+testdb.URL(t))
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err()
		cancel()
		require.NoError(t, timedOut, "%v must stop by itself, not retry; output:\n%s", args, out)
		require.Error(t, err, "%v must fail; output:\n%s", args, out)
		require.Contains(t, string(out), "003_inbox_origin.up.sql and 003_release_notice.up.sql both have version 3", args)
		_, err = http.Get("http://" + b.listen + "/webhooks/github")
		require.Error(t, err, "ingest never listened")
	}
}

// migrate --prepare on an up-to-date database says so and changes nothing
// (migrations/ahead_test.go prepares an older one).
func TestMigratePrepareWithNothingPending(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.URL(t))
	out := &testlog.Buffer{}
	e := b.env
	e.stderr = out
	require.Equal(t, 0, run(context.Background(), []string{"migrate", "--prepare", "--config", b.configPath}, e), out.String())
	require.Contains(t, out.String(), "nothing to prepare")
}
