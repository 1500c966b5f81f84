package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	readToken = "read-token-0123456789"
	opsToken  = "ops-token-0123456789"
)

const tokensYAML = `
admin:
  token: "${HOOKINBOX_ADMIN_TOKEN}"
  tokens:
    - { name: laptops, token: "${HOOKINBOX_READ_TOKEN}", scope: read }
    - { name: oncall,  token: "${HOOKINBOX_OPS_TOKEN}",  scope: operate }
`

var tokensEnv = map[string]string{"HOOKINBOX_ADMIN_TOKEN": "admin-token-0123456789",
	"HOOKINBOX_READ_TOKEN": readToken, "HOOKINBOX_OPS_TOKEN": opsToken}

func TestAdminTokensParse(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(tokensYAML), envOf(tokensEnv))
	require.NoError(t, err)
	require.Equal(t, "admin-token-0123456789", cfg.Admin.Token)
	require.Equal(t, []AdminToken{{Name: "laptops", Token: readToken, Scope: "read"}, {Name: "oncall", Token: opsToken, Scope: "operate"}}, cfg.Admin.Tokens)
}

// Each refusal names the key, and the token itself never.
func TestAdminTokenErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	entry := func(name, token, scope string) string {
		return "{name: '" + name + "', token: '" + token + "', scope: '" + scope + "'}"
	}
	tokens := func(entries ...string) string { return "admin:\n  tokens: [" + strings.Join(entries, ", ") + "]\n" }
	for name, tc := range map[string]struct{ yaml, want string }{
		"bad name":          {tokens(entry("Lap Tops", readToken, "read")), `admin.tokens[0].name: "Lap Tops" must match [a-z0-9-]{1,64}`},
		"no name":           {tokens(entry("", readToken, "read")), `admin.tokens[0].name: "" must match`},
		"admin.token's":     {tokens(entry("admin", readToken, "read")), `admin.tokens[0] (admin).name: "admin" is admin.token's name`},
		"duplicate name":    {tokens(entry("a", readToken, "read"), entry("a", opsToken, "read")), `admin.tokens[1] (a).name: duplicate token name`},
		"unknown scope":     {tokens(entry("a", readToken, "write")), `admin.tokens[0] (a).scope: "write" (want read, operate, admin)`},
		"no scope":          {tokens(entry("a", readToken, "")), `admin.tokens[0] (a).scope: "" (want read, operate, admin)`},
		"empty token":       {"admin:\n  tokens: [{name: a, token: '${UNSET}', scope: read}]\n", `admin.tokens[0] (a).token: empty (is the ${VAR} it names set?)`},
		"trailing space":    {tokens(entry("a", readToken+" ", "read")), `admin.tokens[0] (a).token: has leading or trailing whitespace`},
		"leading tab":       {tokens(entry("a", "\t"+readToken, "read")), `admin.tokens[0] (a).token: has leading or trailing whitespace`},
		"same token":        {tokens(entry("a", readToken, "read"), entry("b", readToken, "admin")), `admin.tokens[1] (b).token: the same token as admin.tokens[0] (a)`},
		"admin.token's too": {"admin:\n  token: '" + readToken + "'\n  tokens: [" + entry("a", readToken, "read") + "]\n", `admin.tokens[0] (a).token: the same token as admin.token`},
		"admin.token space": {"admin: {token: '" + readToken + " '}\n", `admin.token (HOOKINBOX_ADMIN_TOKEN): has leading or trailing whitespace`},
	} {
		_, err := Parse([]byte(tc.yaml), envOf(nil))
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
		require.NotContains(t, err.Error(), readToken, name)
	}
}

// The admin.tokens blocks the docs show load as written.
func TestDocsAdminTokensBlocksLoad(t *testing.T) {
	t.Parallel()
	found := 0
	for _, page := range []string{"admin.md", "configuration.md", "security.md"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
		require.NoError(t, err)
		for _, b := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
			if !strings.Contains(b[1], "  tokens:") {
				continue
			}
			found++
			cfg, err := Parse([]byte(b[1]), envOf(tokensEnv))
			require.NoError(t, err, "%s:\n%s", page, b[1])
			require.NotEmpty(t, cfg.Admin.Tokens, page)
		}
	}
	require.Positive(t, found, "docs/admin.md shows admin.tokens")
}
