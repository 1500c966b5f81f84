package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Sources of senders that sign neither their id nor a time dedupe bodies
// unless told not to; the others only when told to.
func TestBodyDedupDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
sources:
  - { name: gh, provider: github, secrets: [s] }
  - { name: gh-off, provider: github, secrets: [s], body_dedup: false }
  - { name: shop, provider: shopify, secrets: [s] }
  - { name: pay, provider: stripe, secrets: [whsec_s] }
  - { name: pay-on, provider: stripe, secrets: [whsec_s], body_dedup: true }
  - { name: custom, provider: hmac, secrets: [s], hmac: { signature_header: X-Sig, id: { header: X-Id }, event_type: { header: X-Type } } }
`), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	want := map[string]bool{"gh": true, "gh-off": false, "shop": true, "pay": false, "pay-on": true, "custom": true}
	for _, s := range cfg.Sources {
		require.Equal(t, want[s.Name], s.DedupBodies(), s.Name)
	}
}
