package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/jobs"
)

// Headers a browser sends with a form another site submits to us.
func crossSite() map[string]string {
	return map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
}

// with returns h plus more (more wins).
func with(h map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// A browser attaches cached Basic credentials to any request to our origin,
// a form another site submits included. State-changing requests with them
// must come from our own origin; nothing is done, and nothing is stored
// under their Idempotency-Key.
func TestCrossSiteRequestsWithBrowserCredentialsRefused(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-csrf-1", "push", `{}`)
	replay := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	host := strings.TrimPrefix(b.baseURL, "http://")
	browser := map[string]string{"Authorization": basic("x", token), "Idempotency-Key": "csrf"}
	// The bulk route with a body a <form enctype="text/plain"> can send.
	formBody := map[string]string{"Content-Type": "text/plain"}

	for name, h := range map[string]map[string]string{
		"cross-site":                      crossSite(),
		"same-site (another port)":        {"Origin": "http://localhost:9999", "Sec-Fetch-Site": "same-site"},
		"user-typed (none)":               {"Sec-Fetch-Site": "none"},
		"no Sec-Fetch-Site, other Origin": {"Origin": "https://evil.example"},
		"no Sec-Fetch-Site, other scheme": {"Origin": "https://" + host},
		"no Sec-Fetch-Site, null Origin":  {"Origin": "null"},
		"neither header":                  {},
	} {
		r := b.do(t, http.MethodPost, replay, "", with(browser, h))
		require.Equal(t, http.StatusForbidden, r.status, "%s: %s", name, r.body)
		require.Equal(t, "cross_site_request", r.errorCode(t), name)
		r = b.do(t, http.MethodPost, "/admin/bulk-replays", `{"status":"received"}`, with(with(browser, formBody), h))
		require.Equal(t, http.StatusForbidden, r.status, "%s: %s", name, r.body)
		require.Equal(t, "cross_site_request", r.errorCode(t), name)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM bulk_replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM river_job"), "only ingest's job")

	// Reading is not refused: a cross-site GET cannot read our answer.
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", with(browser, crossSite())).status)

	// Our own pages' requests, and Bearer calls (a browser never attaches
	// a bearer token by itself), go through.
	for name, h := range map[string]map[string]string{
		"same-origin":                      with(browser, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": b.baseURL}),
		"no Sec-Fetch-Site, our Origin":    with(browser, map[string]string{"Origin": b.baseURL}),
		"bearer, whatever the browser":     crossSite(),
		"bearer, neither header":           {},
		"forwarded https, matching Origin": with(browser, map[string]string{"Origin": "https://" + host, "X-Forwarded-Proto": "https"}),
	} {
		h = with(h, map[string]string{"Idempotency-Key": name})
		r := b.do(t, http.MethodPost, replay, "", h)
		require.Equal(t, http.StatusAccepted, r.status, "%s: %s", name, r.body)
	}
}

// With no token (loopback only) nothing authenticates a request, so a
// browser's cross-site request is refused the same way; a request that no
// browser made (no Origin, no Sec-Fetch-Site: the CLI, curl) still works.
func TestCrossSiteRequestsRefusedWithoutToken(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) { c.Token = "" }})
	id := b.deliver(t, "github", "gh-csrf-2", "push", `{}`)
	replay := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	anonymous := map[string]string{"Authorization": ""}

	r := b.do(t, http.MethodPost, replay, "", with(anonymous, crossSite()))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Equal(t, "cross_site_request", r.errorCode(t))
	r = b.do(t, http.MethodPost, replay, "", with(anonymous, map[string]string{"Origin": "https://evil.example"}))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))

	require.Equal(t, http.StatusAccepted, b.do(t, http.MethodPost, replay, "", anonymous).status)
	require.Equal(t, http.StatusAccepted, b.do(t, http.MethodPost, replay, "", with(anonymous, map[string]string{"Sec-Fetch-Site": "same-origin"})).status)
}

// River UI's own API sits behind the same check: a cross-site form cannot
// cancel, retry or delete a job with the browser's credentials.
func TestCrossSiteRiverUIActionsRefused(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, riverUI: true})
	ctx := context.Background()
	b.deliver(t, "github", "gh-csrf-3", "push", `{}`)
	var jobID int64
	require.NoError(t, b.pool.QueryRow(ctx, "SELECT id FROM river_job WHERE kind = 'process_delivery'").Scan(&jobID))
	// Discarded, so that retry would change it too.
	_, err := b.pool.Exec(ctx, "UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1", jobID)
	require.NoError(t, err)
	state := func() string {
		var s string
		require.NoError(t, b.pool.QueryRow(ctx, "SELECT state::text FROM river_job WHERE id = $1", jobID).Scan(&s))
		return s
	}
	body := fmt.Sprintf(`{"ids":["%d"]}`, jobID)
	browser := map[string]string{"Authorization": basic("x", token), "Content-Type": "text/plain"}

	for _, action := range []string{"retry", "cancel", "delete"} {
		r := b.do(t, http.MethodPost, "/riverui/api/jobs/"+action, body, with(browser, crossSite()))
		require.Equal(t, http.StatusForbidden, r.status, "%s: %s", action, r.body)
		require.Equal(t, "cross_site_request", r.errorCode(t), action)
		require.Equal(t, "discarded", state(), action)
	}
	r := b.do(t, http.MethodPut, "/riverui/api/queues/deliveries/pause", "{}", with(browser, crossSite()))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)

	// The same request from River UI's own page works: the 403 was the check.
	r = b.do(t, http.MethodPost, "/riverui/api/jobs/retry", body,
		with(browser, map[string]string{"Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "available", state())
}

// A JSON body must say it is JSON: a cross-site form can send text/plain
// (or a form encoding) without a preflight, never application/json.
func TestBulkReplayRequiresJSONContentType(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx", ""} {
		r := b.do(t, http.MethodPost, "/admin/bulk-replays", `{"status":"failed"}`,
			map[string]string{"Content-Type": ct, "Idempotency-Key": "ct-" + ct})
		require.Equal(t, http.StatusUnsupportedMediaType, r.status, "%q: %s", ct, r.body)
		require.Equal(t, "unsupported_media_type", r.errorCode(t), ct)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM bulk_replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency"))

	r := b.do(t, http.MethodPost, "/admin/bulk-replays", `{"status":"failed"}`, map[string]string{"Content-Type": "application/json; charset=utf-8"})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var br jobs.BulkReplay
	r.json(t, &br)
	require.NotZero(t, br.ID)
}
