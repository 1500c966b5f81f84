package cli

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A source's redact_headers reach ingest: the listed headers are neither
// stored nor shown by `hookinbox deliveries`.
func TestServeRedactsConfiguredHeaders(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	raw, err := os.ReadFile(b.configPath)
	require.NoError(t, err)
	const github = "    provider: github\n"
	require.Equal(t, 1, strings.Count(string(raw), github), "the committed config's github source moved")
	cfg := strings.Replace(string(raw), github, github+"    redact_headers: [x-proxy-secret]\n", 1)
	require.NoError(t, os.WriteFile(b.configPath, []byte(cfg), 0o600))
	b.serve(t)

	body := []byte(`{"action":"opened"}`)
	status := b.postRaw(t, "github", body, "gh-redact-1", "issues", "X-Proxy-Secret: proxy-s3cret", "X-Note: kept")
	require.Equal(t, http.StatusAccepted, status, "log:\n%s", b.stderr)

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var headers map[string][]string
	require.NoError(t, pool.QueryRow(context.Background(),
		"SELECT headers FROM delivery WHERE delivery_id = 'gh-redact-1'").Scan(&headers))
	require.Equal(t, []string{"kept"}, headers["X-Note"])
	require.NotContains(t, headers, "X-Proxy-Secret")

	code, out := b.run(t, "deliveries", "1")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "X-Note: kept")
	require.NotContains(t, out, "proxy-s3cret")
}
