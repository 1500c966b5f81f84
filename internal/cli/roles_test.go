package cli

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// An ingest-only and a worker-only process on one database behave as one
// service: the first stores, the second processes.
func TestServeRolesSplitIngestAndWork(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	ingestOnly, worker := setup(t, url), setup(t, url)
	ingestOnly.serve(t, "--role=ingest")
	worker.serve(t, "--role=worker", "--migrate=false")

	code, out := ingestOnly.send(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool {
		var status string
		require.NoError(t, pool.QueryRow(context.Background(), "SELECT status FROM delivery").Scan(&status))
		return status == "processed"
	}, 15*time.Second, 50*time.Millisecond, "the worker processed what ingest stored")

	// The worker's listener answers probes, not webhooks.
	code, out = worker.run(t, "healthcheck", "--ready")
	require.Equal(t, 0, code, out)
	resp, err := http.Get("http://" + worker.listen + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	code, out = worker.send(t, "--source", "github", "--event", "push", "--url", "http://"+worker.listen+"/webhooks/github")
	require.Equal(t, 1, code)
	require.Contains(t, out, "404")

}
