package admin_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
)

// The admin listener's /readyz tells operators, behind the token, why the
// database does not answer: the detail the public ingest /readyz keeps to
// the log.
func TestAdminReadyzShowsTheDatabaseError(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	r := b.do(t, http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.JSONEq(t, `{"status":"ready"}`, string(r.body))
	r = b.do(t, http.MethodGet, "/readyz", "", map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusUnauthorized, r.status)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there
	down, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://nobody@127.0.0.1:%d/none?connect_timeout=2", port))
	require.NoError(t, err)
	t.Cleanup(down.Close)
	b = setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) { c.Pool = down }})
	r = b.do(t, http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"reason":"database unavailable"`)
	require.Contains(t, string(r.body), fmt.Sprint(port), "the detail, for operators")
}
