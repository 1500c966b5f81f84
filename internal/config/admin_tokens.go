package config

import (
	"fmt"
	"slices"
	"strings"
)

// adminTokenName is admin.token's name in the audit log and sessions.
const adminTokenName = "admin"

// adminScopes are the scopes an admin token may have, narrowest first.
var adminScopes = []string{"read", "operate", "admin"}

// validateTokens checks admin.tokens: names and tokens that say who holds
// a token, each token unique (two holders of one token could not be told
// apart) and with a scope. Whether a token is strong enough serve checks
// (admin.WeakToken), beside admin.token's.
func (a Admin) validateTokens() error {
	if err := checkTokenSpaces("admin.token (HOOKINBOX_ADMIN_TOKEN)", a.Token); err != nil {
		return err
	}
	names := map[string]bool{}
	holders := map[string]string{} // token → the key holding it
	if a.Token != "" {
		holders[a.Token] = "admin.token"
	}
	for i, t := range a.Tokens {
		key := fmt.Sprintf("admin.tokens[%d]", i)
		if !namePattern.MatchString(t.Name) {
			return fmt.Errorf("%s.name: %q must match [a-z0-9-]{1,64}", key, t.Name)
		}
		key = fmt.Sprintf("admin.tokens[%d] (%s)", i, t.Name)
		switch {
		case t.Name == adminTokenName:
			return fmt.Errorf("%s.name: %q is admin.token's name", key, t.Name)
		case names[t.Name]:
			return fmt.Errorf("%s.name: duplicate token name", key)
		case !slices.Contains(adminScopes, t.Scope):
			return fmt.Errorf("%s.scope: %q (want %s)", key, t.Scope, strings.Join(adminScopes, ", "))
		case t.Token == "":
			return fmt.Errorf("%s.token: empty (is the ${VAR} it names set?)", key)
		}
		if err := checkTokenSpaces(key+".token", t.Token); err != nil {
			return err
		}
		if other, ok := holders[t.Token]; ok {
			return fmt.Errorf("%s.token: the same token as %s; each holder needs a token of its own", key, other)
		}
		names[t.Name], holders[t.Token] = true, key
	}
	return nil
}

// checkTokenSpaces refuses a token with spaces around it: a Bearer
// header's are not the token's, so it would work in some clients and not
// in others.
func checkTokenSpaces(key, token string) error {
	if strings.TrimSpace(token) != token {
		return fmt.Errorf("%s: has leading or trailing whitespace", key)
	}
	return nil
}
