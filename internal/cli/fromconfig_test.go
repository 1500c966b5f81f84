package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

func noEnv(string) (string, bool) { return "", false }

// The checks that need hookinbox's parts name the key as config.Parse's
// own do, and loadConfig runs both.
func TestCheckConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, yaml, want string }{
		{"destination without url", "destinations: [{name: app}]", `destinations[0] (app).url: "" is not an http(s) URL`},
		{"destination bad name", "destinations: [{name: App, url: 'http://x'}]", `destinations[0] (App).name: "App" must be`},
		{"destination twice", "destinations: [{name: a, url: 'http://x'}, {name: a, url: 'http://y'}]", `destinations[1].name: "a" is used twice`},
		{"destination bad secret", "destinations: [{name: a, url: 'http://x', secret: 'plain'}]", `destinations[0] (a).secret: not a Standard Webhooks secret`},
		{"route to unknown destination", "sources: [{name: s, provider: github, secrets: [x]}]\ndestinations: [{name: a, url: 'http://x'}]\nroutes: [{source: s, events: ['*'], to: [b]}]", `routes[0].to: no destination named "b"`},
		{"route from unknown source", "destinations: [{name: a, url: 'http://x'}]\nroutes: [{source: s, events: ['*'], to: [a]}]", `routes[0].source: no source named "s"`},
		{"route without events", "destinations: [{name: a, url: 'http://x'}]\nroutes: [{source: '*', to: [a]}]", `routes[0].events: empty`},
		{"route with a bad pattern", "destinations: [{name: a, url: 'http://x'}]\nroutes: [{source: '*', events: ['is*ues'], to: [a]}]", `routes[0].events: "is*ues" is not`},
		{"skip_stale unordered", "destinations: [{name: a, url: 'http://x'}]\nroutes: [{source: '*', events: ['*'], to: [a], skip_stale: true}]", `routes[0].skip_stale: only ordered routes`},
		{"final status not 4xx", "downstream: {final_statuses: [422, 500]}", `downstream.final_statuses: 500 is not a 4xx status`},
		{"409 as a final status", "downstream: {final_statuses: [409]}", `downstream.final_statuses: 409 means a request with the same key is in progress`},
		{"github block without token", "sources: [{name: a, provider: github, secrets: [x], github: {repo: o/r, hook_id: 1}}]", `sources[0] (a).github.token (or github.app_id and github.private_key, for a GitHub App) is required`},
		{"github app without key", "sources: [{name: a, provider: github, secrets: [x], github: {app_id: 7}}]", `sources[0] (a).github.private_key is required with github.app_id`},
		{"github app key file missing", "sources: [{name: a, provider: github, secrets: [x], github: {app_id: 7, private_key: /nonexistent/app.pem}}]", `sources[0] (a).github.private_key is neither PEM nor a readable file`},
		{"github app with a hook id", "sources: [{name: a, provider: github, secrets: [x], github: {app_id: 7, private_key: /x.pem, hook_id: 3}}]", `sources[0] (a).github.hook_id, github.repo and github.org do not apply to a GitHub App`},
		{"stripe block without key", "sources: [{name: a, provider: stripe, secrets: [x], stripe: {}}]", `sources[0] (a).stripe.api_key is required`},
	}
	for _, tc := range cases {
		cfg, err := config.Parse([]byte(tc.yaml), noEnv)
		require.NoError(t, err, "%s: config.Parse checks the file's own values only", tc.name)
		err = CheckConfig(cfg)
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func TestLoadConfigRunsCheckConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookinbox.yaml")
	require.NoError(t, os.WriteFile(path, []byte("destinations: [{name: a, url: 'http://x'}]\nroutes: [{source: '*', events: ['*'], to: [b]}]\n"), 0o600))
	_, err := loadConfig(path, env{lookup: noEnv})
	require.ErrorContains(t, err, "config "+path+": routes[0].to: no destination named \"b\"")
}

// The configured destinations and routes are used as decoded; forward_url
// adds its destination and route.
func TestDestinationsAndRoutes(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`
sources:
  - {name: github, provider: github, secrets: [x]}
  - {name: billing, provider: standard, secrets: [eA==], forward_url: "http://billing.internal/events"}
destinations:
  - {name: orders-api, url: "https://orders.internal/webhooks", timeout: 3s}
routes:
  - {source: github, events: ["issues", "check_run.*"], to: [orders-api], ordered: true, skip_stale: true}
`), noEnv)
	require.NoError(t, err)
	require.NoError(t, CheckConfig(cfg))
	dests, routes := destinationsAndRoutes(cfg)
	require.Len(t, dests, 2)
	require.Equal(t, cfg.Destinations[0], dests[0])
	require.Equal(t, config.Destination{Name: "billing-forward", URL: "http://billing.internal/events"}, dests[1],
		"forward_url is shorthand for a destination")
	require.Len(t, routes, 2)
	require.Equal(t, cfg.Routes[0], routes[0])
	require.Equal(t, config.Route{Source: "billing", Events: []string{"*"}, To: []string{"billing-forward"}}, routes[1])
}
