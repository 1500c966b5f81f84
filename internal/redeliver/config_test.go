package redeliver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	valid := Config{Source: "github", GitHubAPI: config.GitHubAPI{Token: "t", Repo: "octo/hello", HookID: 1}}
	require.NoError(t, valid.Validate())
	require.NoError(t, valid.WithDefaults().Validate())

	org := valid
	org.Repo, org.Org = "", "octo-org"
	require.NoError(t, org.Validate())

	_, keyPEM := appKeyPEM(t)
	app := Config{Source: "github", GitHubAPI: config.GitHubAPI{AppID: 1, PrivateKey: keyPEM}}
	require.NoError(t, app.Validate())

	for _, tc := range []struct {
		name   string
		modify func(*Config)
		field  string
		msg    string
	}{
		{"no source", func(c *Config) { c.Source = "" }, "source", "source is required"},
		{"no token", func(c *Config) { c.Token = "" }, "github.token", "github.token (or github.app_id and github.private_key, for a GitHub App) is required"},
		{"neither repo nor org", func(c *Config) { c.Repo = "" }, "github.repo", "github.repo or github.org is required"},
		{"both repo and org", func(c *Config) { c.Org = "octo-org" }, "github.repo", "github.repo and github.org are exclusive"},
		{"repo without owner", func(c *Config) { c.Repo = "hello" }, "github.repo", `github.repo must be "owner/name", got "hello"`},
		{"repo with empty name", func(c *Config) { c.Repo = "octo/" }, "github.repo", `github.repo must be "owner/name"`},
		{"repo with extra slash", func(c *Config) { c.Repo = "octo/hello/x" }, "github.repo", `github.repo must be "owner/name"`},
		{"org with slash", func(c *Config) { c.Repo, c.Org = "", "octo/x" }, "github.org", "github.org must be an organisation login"},
		{"no hook id", func(c *Config) { c.HookID = 0 }, "github.hook_id", "github.hook_id is required"},
		{"negative hook id", func(c *Config) { c.HookID = -3 }, "github.hook_id", "github.hook_id is required"},
		{"relative api url", func(c *Config) { c.APIURL = "github.example.com/api/v3" }, "github.api_url", "github.api_url must be an absolute http(s) URL"},
		{"ftp api url", func(c *Config) { c.APIURL = "ftp://github.example.com/" }, "github.api_url", "github.api_url must be an absolute http(s) URL"},

		{"app with a token too", func(c *Config) { *c = app; c.Token = "t" }, "github.token", "github.token and github.app_id are exclusive"},
		{"app without its id", func(c *Config) { *c = app; c.AppID = 0 }, "github.app_id", "github.app_id is required"},
		{"app without its key", func(c *Config) { *c = app; c.PrivateKey = "" }, "github.private_key", "github.private_key is required"},
		{"app with a repo", func(c *Config) { *c = app; c.Repo = "o/r" }, "github.hook_id", "do not apply to a GitHub App"},
		{"app with a hook id", func(c *Config) { *c = app; c.HookID = 3 }, "github.hook_id", "github.hook_id, github.repo and github.org do not apply"},
		{"app key neither PEM nor a file", func(c *Config) { *c = app; c.PrivateKey = "/nonexistent/key.pem" }, "github.private_key", "neither PEM nor a readable file"},
		{"app key not RSA", func(c *Config) {
			*c = app
			c.PrivateKey = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"
		}, "github.private_key", "not an RSA private key"},
		{"app bad api url", func(c *Config) { *c = app; c.APIURL = "ftp://x/" }, "github.api_url", "github.api_url must be an absolute http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := valid
			tc.modify(&cfg)
			err := cfg.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			var cerr *ConfigError
			require.ErrorAs(t, err, &cerr)
			require.Equal(t, tc.field, cerr.Field)
			require.Contains(t, err.Error(), tc.msg)
			require.NotContains(t, err.Error(), "BEGIN", "never the key")
		})
	}
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	cfg := Config{}.WithDefaults()
	require.Equal(t, DefaultAPIURL, cfg.APIURL)
	require.NotNil(t, cfg.HTTPClient)
	require.Equal(t, "30s", cfg.HTTPClient.Timeout.String())
}

func TestRedeliverRejectsInvalidConfigBeforeCallingGitHub(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.cfg
	cfg.HookID = 0

	res, err := Redeliver(context.Background(), b.pool, cfg, b.now)

	require.ErrorIs(t, err, ErrInvalidConfig)
	require.NotNil(t, res.Errors)
	require.Empty(t, b.gh.listCalls())
}
