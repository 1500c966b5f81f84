package cli

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The public listener's /readyz, while serve's database refuses
// connections, says "database unavailable" and nothing of the database:
// its user, name and address go to the log only.
func TestReadyzHidesTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := testdb.URL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	name := strings.TrimPrefix(u.Path, "/")
	b := setup(t, dbURL)
	b.serve(t)

	// The real server turns serve away: no new connection to the
	// database, and those open are ended.
	admin, err := pgxpool.New(ctx, testdb.AdminURL())
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	ident := pgx.Identifier{name}.Sanitize()
	_, err = admin.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false")
	require.NoError(t, err)
	// Before serve's own cleanup (last in, first out): it stops cleanly.
	t.Cleanup(func() { _, _ = admin.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS true") })
	_, err = admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	require.NoError(t, err)

	var status int
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + b.listen + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		status, body = resp.StatusCode, string(raw)
		return status == http.StatusServiceUnavailable && strings.Contains(b.stderr.String(), "failed to connect")
	}, 20*time.Second, 50*time.Millisecond, "readyz %d %s; log:\n%s", status, body, b.stderr)
	require.JSONEq(t, `{"status":"unavailable","reason":"database unavailable"}`, body)
	for _, secret := range []string{name, u.User.Username(), u.Port(), u.Hostname()} {
		require.NotContains(t, body, secret)
	}
	log := b.stderr.String()
	require.Contains(t, log, "not ready: database unavailable")
	require.Contains(t, log, "database="+name)
	require.Contains(t, log, u.Port())
}
