package admin_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
)

func TestRecoveryRoutes(t *testing.T) {
	t.Parallel()
	var (
		calls     atomic.Int32
		lastSince atomic.Value
	)
	b := setupWith(t, setupOpts{cfg: func(c *admin.Config) {
		c.Redeliver = map[string]admin.Recovery{"github": func(_ context.Context, since time.Time) (any, error) {
			calls.Add(1)
			lastSince.Store(since)
			// redeliver.Result's shape, which the OpenAPI document holds it to.
			return map[string]any{"examined": 3, "failed": 1, "already_in_inbox": 0, "redelivered": 1, "errors": []string{}}, nil
		}}
		c.Reconcile = map[string]admin.Recovery{"stripe": func(context.Context, time.Time) (any, error) {
			return nil, errors.New("stripe: 401 invalid api key")
		}}
	}})

	r := b.do(t, http.MethodPost, "/admin/sources/github/redeliver?since=2026-11-29T00:00:00Z", "", map[string]string{"Idempotency-Key": "r1"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.JSONEq(t, `{"examined":3,"failed":1,"already_in_inbox":0,"redelivered":1,"errors":[]}`, string(r.body))
	require.Equal(t, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), lastSince.Load().(time.Time).UTC())
	again := b.do(t, http.MethodPost, "/admin/sources/github/redeliver?since=2026-11-29T00:00:00Z", "", map[string]string{"Idempotency-Key": "r1"})
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, int32(1), calls.Load(), "the repeat was answered from the stored response")

	r = b.do(t, http.MethodPost, "/admin/sources/github/redeliver", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.WithinDuration(t, time.Now().Add(-72*time.Hour), lastSince.Load().(time.Time), time.Minute, "default horizon")

	for path, want := range map[string]struct {
		status int
		code   string
	}{
		"/admin/sources/nope/redeliver":             {http.StatusNotFound, "not_found"},
		"/admin/sources/billing/redeliver":          {http.StatusConflict, "not_configured"},
		"/admin/sources/github/reconcile":           {http.StatusConflict, "not_configured"},
		"/admin/sources/stripe/reconcile":           {http.StatusBadGateway, "upstream_error"},
		"/admin/sources/github/redeliver?since=now": {http.StatusBadRequest, "bad_request"},
	} {
		r := b.do(t, http.MethodPost, path, "", nil)
		require.Equal(t, want.status, r.status, path)
		require.Equal(t, want.code, r.errorCode(t), path)
	}
}
