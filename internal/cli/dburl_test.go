package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// dbURL runs `hookinbox db-url` with stdout w and returns its exit code
// and stderr.
func (b *testBundle) dbURL(t *testing.T, w io.Writer, args ...string) (int, string) {
	t.Helper()
	stderr := &testlog.Buffer{}
	e := b.env
	e.stdout, e.stderr = w, stderr
	code := run(context.Background(), append([]string{"db-url", "--config", b.configPath}, args...), e)
	return code, stderr.String()
}

// The embedded PostgreSQL's logged URL masks the password; db-url gives
// the whole URL, to a terminal or a pipe (psql "$(hookinbox db-url)").
func TestDBURLConnectsToTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	b.serve(t)
	code, out := b.send(t, "--source", "github", "--event", "push")
	require.Equal(t, 0, code, out)

	// Not a terminal or a pipe: refused unless forced.
	var buf strings.Builder
	code, stderr := b.dbURL(t, &buf)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "pass --force")
	require.Empty(t, buf.String())
	file, err := os.Create(filepath.Join(t.TempDir(), "url"))
	require.NoError(t, err)
	defer file.Close()
	code, _ = b.dbURL(t, file)
	require.Equal(t, 1, code, "a file would keep the password")

	code, stderr = b.dbURL(t, &buf, "--force")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "contains the database password")
	require.NotContains(t, stderr, "nothing listens")
	forced := strings.TrimSpace(buf.String())

	// A pipe, as in $(...), needs no --force.
	r, w, err := os.Pipe()
	require.NoError(t, err)
	code, stderr = b.dbURL(t, w)
	require.NoError(t, w.Close())
	require.Equal(t, 0, code, stderr)
	piped, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, forced, strings.TrimSpace(string(piped)))

	// The README's query.
	conn, err := pgx.Connect(context.Background(), forced)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var source, event, payload string
	require.NoError(t, conn.QueryRow(context.Background(),
		"SELECT source, event_type, convert_from(payload, 'UTF8') FROM inbox ORDER BY id DESC LIMIT 1").Scan(&source, &event, &payload))
	require.Equal(t, "github", source)
	require.Equal(t, "push", event)
	require.Contains(t, payload, `"ref": "refs/heads/main"`)
}

// With database_url set, db-url prints that, since it is the database
// this config uses.
func TestDBURLPrintsTheConfiguredDatabase(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	var buf strings.Builder
	code, stderr := b.dbURL(t, &buf, "--force")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, url+"\n", buf.String())

	// An embedded cluster not created yet is said so.
	b = setup(t, "")
	code, stderr = b.dbURL(t, &buf, "--force")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no PostgreSQL cluster here yet")
	require.Contains(t, stderr, "hookinbox serve creates it on its first start")
}
