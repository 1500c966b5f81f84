package admin_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
)

// A read token signed into the console reads every page, is offered no
// button that changes anything, and each of those forms posted anyway is
// refused 403 insufficient_scope, changing nothing; its session reaches
// neither River UI nor River UI's API. An operate session's forms work,
// River UI still refused; an admin session's page links River UI.
func TestConsoleWithAReadToken(t *testing.T) {
	t.Parallel()
	b, _ := setupScopes(t)
	id := b.deliver(t, "github", "gh-console-read", "push", `{}`)
	page := fmt.Sprintf("/console/deliveries/%d", id)
	laptops := b.sessionOf(t, readToken)

	r := b.do(t, http.MethodGet, "/login", "", laptops)
	require.Contains(t, string(r.body), "Signed in with token <strong>laptops</strong> (scope read)")
	r = b.do(t, http.MethodGet, page, "", laptops)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), `action="`+page+`/replay"`, "no Replay button")
	require.Contains(t, string(r.body), "read only: laptops (read)")
	require.NotContains(t, string(r.body), `href="/riverui/`, "no River UI link")
	r = b.do(t, http.MethodGet, "/console/bulk-replays/new?status=received", "", laptops)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), `action="/console/bulk-replays"`, "no Start button")

	csrf := csrfTokenField.FindStringSubmatch(string(r.body))
	require.NotNil(t, csrf, "the sign-out form carries the session's CSRF token")
	form := url.Values{"csrf_token": {csrf[1]}, "idempotency_key": {"read-forged"}, "status": {"received"}}.Encode()
	post := with(laptops, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	for _, path := range []string{page + "/replay", "/console/bulk-replays", "/console/destinations/app/pause",
		"/console/destinations/app/resume", "/console/destinations/app/retry", "/console/destinations/app/abandon"} {
		r := b.do(t, http.MethodPost, path, form, post)
		require.Equal(t, http.StatusForbidden, r.status, path)
		require.Contains(t, string(r.body), "<code>insufficient_scope</code>: this route needs scope operate; token laptops has read", path)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM bulk_replay"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM api_idempotency"))

	for name, h := range map[string]map[string]string{"read": laptops, "operate": b.sessionOf(t, operateToken)} {
		r := b.do(t, http.MethodGet, "/riverui/", "", h)
		require.Equal(t, http.StatusForbidden, r.status, name)
		r = b.do(t, http.MethodPost, "/riverui/api/jobs/retry", `{"ids":["1"]}`, with(h, map[string]string{"Sec-Fetch-Site": "same-origin"}))
		require.Equal(t, http.StatusForbidden, r.status, name)
		require.Equal(t, admin.CodeInsufficientScope, r.errorCode(t), name)
	}

	oncall := b.sessionOf(t, operateToken)
	r = b.do(t, http.MethodGet, page, "", oncall)
	require.Contains(t, string(r.body), `action="`+page+`/replay"`)
	require.NotContains(t, string(r.body), `href="/riverui/`)
	r = b.do(t, http.MethodPost, page+"/replay", url.Values{"csrf_token": {csrf[1]}}.Encode(), post)
	require.Equal(t, http.StatusForbidden, r.status, "the read session's CSRF token is not oncall's session's")
	f := formOf(t, b.do(t, http.MethodGet, page, "", oncall).body)
	r = b.do(t, http.MethodPost, page+"/replay", f.Encode(), with(post, oncall))
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))

	r = b.do(t, http.MethodGet, "/console/", "", b.sessionOf(t, token))
	require.Contains(t, string(r.body), `href="/riverui/"`)
}

// A session holds its token's name and scope, signed with a key of that
// token: each request finds the token by name in the configuration the
// server runs with now. Its token removed, its value changed or its scope
// changed, the session ends (401); another token's change leaves it be.
// A cookie whose name or scope is altered is refused.
func TestSessionFollowsItsToken(t *testing.T) {
	t.Parallel()
	b, _ := setupScopes(t)
	laptops := b.sessionOf(t, readToken)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", laptops).status)

	restarted := func(tokens []config.AdminToken, adminToken string) *testBundle {
		return setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) { c.Token, c.Tokens = adminToken, tokens }})
	}
	oncall := namedTokens[1]
	for name, tc := range map[string]struct {
		tokens     []config.AdminToken
		adminToken string
		want       int
	}{
		"unchanged":            {namedTokens, token, http.StatusOK},
		"admin.token changed":  {namedTokens, "another-admin-token", http.StatusOK},
		"scope raised":         {[]config.AdminToken{{Name: "laptops", Token: readToken, Scope: "operate"}, oncall}, token, http.StatusUnauthorized},
		"value changed":        {[]config.AdminToken{{Name: "laptops", Token: readToken + "-rotated", Scope: "read"}, oncall}, token, http.StatusUnauthorized},
		"removed":              {[]config.AdminToken{oncall}, token, http.StatusUnauthorized},
		"renamed":              {[]config.AdminToken{{Name: "desks", Token: readToken, Scope: "read"}, oncall}, token, http.StatusUnauthorized},
		"only admin.token now": {nil, token, http.StatusUnauthorized},
	} {
		r := restarted(tc.tokens, tc.adminToken).do(t, http.MethodGet, "/admin/deliveries", "", laptops)
		require.Equal(t, tc.want, r.status, name)
	}

	// The cookie: issue time, id, scope, name, then the MAC.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(laptops["Cookie"], sessionCookie+"="))
	require.NoError(t, err)
	payload, sum := raw[:len(raw)-32], raw[len(raw)-32:]
	require.Equal(t, "laptops", string(payload[25:]), "the token's name, never its value")
	require.NotContains(t, string(raw), readToken)
	forge := func(scope byte, name string) map[string]string {
		p := append(append([]byte{}, payload[:24]...), scope)
		p = append(append(p, name...), sum...)
		return map[string]string{"Authorization": "", "Cookie": sessionCookie + "=" + base64.RawURLEncoding.EncodeToString(p)}
	}
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/admin/deliveries", "", forge(byte(admin.ScopeRead), "laptops")).status)
	for name, h := range map[string]map[string]string{
		"scope raised": forge(byte(admin.ScopeAdmin), "laptops"),
		"as oncall":    forge(byte(admin.ScopeOperate), "oncall"),
		"as admin":     forge(byte(admin.ScopeAdmin), admin.AdminTokenName),
		"unknown name": forge(byte(admin.ScopeRead), "nobody"),
	} {
		require.Equal(t, http.StatusUnauthorized, b.do(t, http.MethodGet, "/admin/deliveries", "", h).status, name)
	}
}

// The audit log names the token of every state-changing request, and how
// it came (bearer, basic, session), its refusals included; no log line
// holds a token.
func TestAuditNamesTheToken(t *testing.T) {
	t.Parallel()
	b, _ := setupScopes(t)
	id := b.deliver(t, "github", "gh-audit-1", "push", `{}`)
	replay := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	require.Equal(t, http.StatusForbidden, b.do(t, http.MethodPost, replay, "", map[string]string{"Authorization": "Bearer " + readToken}).status)
	require.Equal(t, http.StatusAccepted, b.do(t, http.MethodPost, replay, "", map[string]string{"Authorization": "Bearer " + operateToken}).status)
	laptops := b.sessionOf(t, readToken)
	require.Equal(t, http.StatusForbidden, b.do(t, http.MethodPost, replay, "", with(laptops, map[string]string{"Sec-Fetch-Site": "same-origin"})).status)
	r := b.do(t, http.MethodGet, "/admin/deliveries", "", map[string]string{"Authorization": "Bearer " + readToken})
	require.Equal(t, http.StatusOK, r.status, "reads are not audited")

	logs := b.logs.String()
	for _, want := range []string{
		`msg="admin audit" token=laptops via=bearer method=POST path=` + replay + ` status=403`,
		`msg="admin audit" token=oncall via=bearer method=POST path=` + replay + ` status=202`,
		`msg="admin sign-in" token=laptops scope=read`,
		`msg="admin audit" token=laptops via=session method=POST path=` + replay + ` status=403`,
	} {
		require.Contains(t, logs, want)
	}
	require.Contains(t, logs, "operation=replay_delivery")
	require.NotContains(t, logs, "path=/admin/deliveries ", "a GET is not audited")
	for _, secret := range []string{token, readToken, operateToken} {
		require.NotContains(t, logs, secret)
	}
}

// Two tokens of one name or one value make a holder ambiguous: NewServer
// refuses them, as it refuses a token without a name or a value, a scope
// no token has, and a named token taking admin.token's name.
func TestTokensMustBeDistinct(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	for name, tc := range map[string]struct {
		token  string
		tokens []config.AdminToken
	}{
		"same value":               {"", []config.AdminToken{{Name: "a", Token: readToken, Scope: "read"}, {Name: "b", Token: readToken, Scope: "admin"}}},
		"admin.token's value":      {token, []config.AdminToken{{Name: "a", Token: token, Scope: "read"}}},
		"same name":                {"", []config.AdminToken{{Name: "a", Token: readToken, Scope: "read"}, {Name: "a", Token: operateToken, Scope: "read"}}},
		"admin.token's name":       {token, []config.AdminToken{{Name: admin.AdminTokenName, Token: readToken, Scope: "read"}}},
		"no name":                  {"", []config.AdminToken{{Name: "", Token: readToken, Scope: "read"}}},
		"no value":                 {"", []config.AdminToken{{Name: "a", Token: "", Scope: "read"}}},
		"public is no token's":     {"", []config.AdminToken{{Name: "a", Token: readToken, Scope: "public"}}},
		"past admin is no scope's": {"", []config.AdminToken{{Name: "a", Token: readToken, Scope: "owner"}}},
	} {
		_, err := admin.NewServer(admin.Config{Admin: config.Admin{Token: tc.token, Tokens: tc.tokens, Listen: "127.0.0.1:0"}, Pool: b.pool, River: b.river})
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), readToken, name)
	}
	_, err := admin.NewServer(admin.Config{Admin: config.Admin{Tokens: namedTokens, Listen: "0.0.0.0:0"}, Pool: b.pool, River: b.river})
	require.NoError(t, err, "named tokens alone protect a listener off loopback")
}

// What an attacker holding a read token, or a near miss of a token, can
// try: a token with whitespace around it is another token (Bearer's
// trailing space is the header's, not the token's: the same read token),
// a token's prefix or another case is no token, and a read token's Basic
// navigation starts a read session.
func TestNearMissTokensFailClosed(t *testing.T) {
	t.Parallel()
	b, _ := setupScopes(t)
	for name, auth := range map[string]string{
		"basic, trailing space": basic("x", readToken+" "),
		"basic, leading space":  basic("x", " "+readToken),
		"basic, trailing tab":   basic("x", token+"\t"),
		"prefix":                "Bearer " + operateToken[:len(operateToken)-1],
		"upper case":            "Bearer " + strings.ToUpper(operateToken),
		"two tokens":            "Bearer " + readToken + operateToken,
	} {
		r := b.do(t, http.MethodGet, "/admin/deliveries", "", map[string]string{"Authorization": auth})
		require.Equal(t, http.StatusUnauthorized, r.status, name)
	}
	r := b.do(t, http.MethodPost, "/login", url.Values{"token": {readToken + " "}}.Encode(), map[string]string{
		"Authorization": "", "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusUnauthorized, r.status, "the form's token is taken as typed")

	r = b.do(t, http.MethodPost, "/admin/bulk-replays", `{}`, map[string]string{"Authorization": "Bearer " + readToken + " "})
	require.Equal(t, http.StatusForbidden, r.status, "still the read token")

	r = b.do(t, http.MethodGet, "/riverui/", "", navigation(basic("x", readToken)))
	require.Equal(t, http.StatusSeeOther, r.status, "a Basic navigation starts a session")
	c := r.cookie(sessionCookie)
	require.NotNil(t, c)
	require.Equal(t, http.StatusForbidden, b.do(t, http.MethodGet, "/riverui/", "", cookieHeader(c)).status, "a read session")
}
