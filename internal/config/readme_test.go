package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocsSourceConfigsLoad parses, as written, every source the README and
// the pages in docs/ show as a list entry to paste under `sources:` (the
// providers' copy-paste block, the hmac scheme, the recovery settings), so
// a copied block starts a server.
func TestDocsSourceConfigsLoad(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	slices.Sort(pages)
	pages = append([]string{"../../README.md"}, pages...)
	blockRE := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	perPage := map[string]int{}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, b := range blockRE.FindAllStringSubmatch(string(raw), -1) {
			if !isSourceEntries(b[1]) {
				continue
			}
			perPage[filepath.Base(page)]++
			cfg, err := Parse([]byte("sources:\n"+b[1]), func(name string) (string, bool) {
				if strings.HasPrefix(name, "HOOKINBOX_") || name == "DATABASE_URL" {
					return "", false
				}
				return placeholderSecret(name), true
			})
			require.NoError(t, err, "%s block:\n%s", page, b[1])
			require.NotEmpty(t, cfg.Sources)
		}
	}
	// Where the sections live: the providers' copy-paste block and the
	// hmac scheme, and GitHub's and Stripe's recovery settings.
	require.GreaterOrEqual(t, perPage["providers.md"], 2, "docs/providers.md's source blocks were found")
	require.GreaterOrEqual(t, perPage["admin.md"], 3, "docs/admin.md's recovery blocks were found")
}

// isSourceEntries reports whether a YAML block is entries of a `sources:`
// list: its first line that is not a comment starts one.
func isSourceEntries(block string) bool {
	for _, l := range strings.Split(block, "\n") {
		if s := strings.TrimSpace(l); s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		return strings.HasPrefix(l, "  - ")
	}
	return false
}

// placeholderSecret stands in for the ${VAR} a block names, in the shape
// its provider needs.
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
