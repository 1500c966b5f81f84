package config

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEProviderConfigsLoad parses every source block of the README's
// "Providers" section as written, so a copy-pasted block starts a server.
func TestREADMEProviderConfigsLoad(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	text := string(raw)
	start := strings.Index(text, "\n### Providers\n")
	end := strings.Index(text, "\n## POST /webhooks/{source}")
	require.True(t, start > 0 && end > start, "README sections moved")
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(text[start:end], -1)
	require.NotEmpty(t, blocks)
	for _, b := range blocks {
		cfg, err := Parse([]byte("sources:\n"+b[1]), func(name string) (string, bool) {
			if strings.HasPrefix(name, "HOOKINBOX_") || name == "DATABASE_URL" {
				return "", false
			}
			return placeholderSecret(name), true
		})
		require.NoError(t, err, "README block:\n%s", b[1])
		require.NotEmpty(t, cfg.Sources)
	}
}

// placeholderSecret stands in for the ${VAR} a README block names, in the
// shape its provider needs.
func placeholderSecret(name string) string {
	switch {
	case strings.Contains(name, "PUBLIC_KEY"):
		return strings.Repeat("ab", 32) // a hex Ed25519 public key
	case strings.Contains(name, "PRIVATE_KEY"):
		return "" // the test of the github app block provides its own
	case strings.Contains(name, "SIGNING"), strings.Contains(name, "SVIX"), strings.Contains(name, "CLERK"), strings.Contains(name, "RESEND"):
		return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	}
	return "placeholder-" + strings.ToLower(name)
}
