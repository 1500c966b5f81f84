package reconcile_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/reconcile"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	valid := reconcile.Config{Source: "stripe", StripeAPI: config.StripeAPI{APIKey: "sk_test_abc"}}

	cases := []struct {
		name   string
		modify func(*reconcile.Config)
		want   string // "" means valid
	}{
		{"minimal", func(*reconcile.Config) {}, ""},
		{"restricted key", func(c *reconcile.Config) { c.APIKey = "rk_live_abc" }, ""},
		{"all set", func(c *reconcile.Config) {
			c.APIBase, c.HTTPClient, c.PageSize = "http://127.0.0.1:1", &http.Client{}, 100
		}, ""},
		{"no source", func(c *reconcile.Config) { c.Source = "" }, "stripe.source is required"},
		{"no key", func(c *reconcile.Config) { c.APIKey = "" }, "stripe.api_key is required"},
		{"webhook secret as key", func(c *reconcile.Config) { c.APIKey = "whsec_leakme" },
			"stripe.api_key must be a secret key (sk_...) or a restricted key (rk_...)"},
		{"publishable key", func(c *reconcile.Config) { c.APIKey = "pk_test_leakme" },
			"stripe.api_key must be a secret key (sk_...) or a restricted key (rk_...)"},
		{"relative base", func(c *reconcile.Config) { c.APIBase = "api.stripe.com" },
			"stripe.api_base must be an absolute http(s) URL"},
		{"page too large", func(c *reconcile.Config) { c.PageSize = 101 }, "stripe.page_size must be between 1 and 100"},
		{"negative page", func(c *reconcile.Config) { c.PageSize = -1 }, "stripe.page_size must be between 1 and 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := valid
			tc.modify(&cfg)
			err := cfg.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.want)
			var cerr *reconcile.ConfigError
			require.ErrorAs(t, err, &cerr)
			require.NotContains(t, err.Error(), "leakme")
		})
	}
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	cfg := reconcile.Config{Source: "stripe", StripeAPI: config.StripeAPI{APIKey: "sk_test_abc"}}.WithDefaults()
	require.Equal(t, "https://api.stripe.com", cfg.APIBase)
	require.Equal(t, 100, cfg.PageSize)
	require.NotNil(t, cfg.HTTPClient)
	require.Equal(t, 30*time.Second, cfg.HTTPClient.Timeout)
}
