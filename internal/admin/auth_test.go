package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, tc := range map[string]struct {
		auth string
		want int
	}{
		"missing":        {"", http.StatusUnauthorized},
		"wrong bearer":   {"Bearer nope", http.StatusUnauthorized},
		"prefix bearer":  {"Bearer " + token[:5], http.StatusUnauthorized},
		"bearer":         {"Bearer " + token, http.StatusOK},
		"basic":          {basic("admin", token), http.StatusOK},
		"basic any user": {basic("", token), http.StatusOK},
		"basic wrong":    {basic("admin", "nope"), http.StatusUnauthorized},
		"garbage":        {"Basic !!!", http.StatusUnauthorized},
	} {
		r := b.do(t, http.MethodGet, "/admin/deliveries", "", map[string]string{"Authorization": tc.auth})
		require.Equal(t, tc.want, r.status, name)
		if tc.want == http.StatusUnauthorized {
			require.Equal(t, "unauthorized", r.errorCode(t), name)
			require.Len(t, r.header.Values("WWW-Authenticate"), 2, name)
		}
	}
	// Unauthenticated requests reach nothing but /healthz, mutations included.
	r := b.do(t, http.MethodPost, "/admin/bulk-replays", `{}`, map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Zero(t, b.count(t, "SELECT count(*) FROM bulk_replay"))
	r = b.do(t, http.MethodGet, "/healthz", "", map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusOK, r.status)
}

func TestNoTokenOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{cfg: func(c *admin.Config) { c.Token = "" }})
	r := b.do(t, http.MethodGet, "/admin/deliveries", "", map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusOK, r.status, "no token on loopback: open")

	_, err := admin.NewServer(admin.Config{Admin: config.Admin{Listen: "0.0.0.0:8081"}, Pool: b.pool, River: b.river})
	require.ErrorIs(t, err, admin.ErrNoTokenOffLoopback)
	_, err = admin.NewServer(admin.Config{Admin: config.Admin{Listen: ":8081"}, Pool: b.pool, River: b.river})
	require.ErrorIs(t, err, admin.ErrNoTokenOffLoopback)
	_, err = admin.NewServer(admin.Config{Admin: config.Admin{Listen: "[::1]:8081"}, Pool: b.pool, River: b.river})
	require.NoError(t, err)
}

func TestPprofOnlyWhenEnabledAndAuthenticated(t *testing.T) {
	t.Parallel()
	off := setup(t)
	require.Equal(t, http.StatusNotFound, off.do(t, http.MethodGet, "/debug/pprof/", "", nil).status)

	on := setupWith(t, setupOpts{cfg: func(c *admin.Config) { c.Pprof = true }})
	r := on.do(t, http.MethodGet, "/debug/pprof/goroutine?debug=1", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "goroutine profile")
	require.Equal(t, http.StatusUnauthorized, on.do(t, http.MethodGet, "/debug/pprof/", "", map[string]string{"Authorization": ""}).status)
}

// Shutdown cancels the context of net/http handlers' requests (River UI,
// pprof, metrics), so a long one (a 30 s CPU profile) ends instead of
// holding shutdown to its deadline.
func TestShutdownCancelsNetHTTPRequests(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var srv *admin.Server
	b := setupWith(t, setupOpts{noWorker: true, server: &srv, cfg: func(c *admin.Config) {
		c.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(started)
			select {
			case <-r.Context().Done():
				w.WriteHeader(http.StatusServiceUnavailable)
			case <-time.After(time.Minute):
			}
		})
	}})
	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, b.baseURL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := b.client.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx), "the request ends when shutdown starts, well before the deadline")
	require.Equal(t, http.StatusServiceUnavailable, <-status)
}
