package admin

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/internal/config"
)

// AdminTokenName is Config.Token's name, in the audit log and sessions;
// no named token may take it.
const AdminTokenName = "admin"

// principal is a configured token as the server knows it: never its value,
// only a hash to compare with.
type principal struct {
	name  string
	scope Scope
	hash  [sha256.Size]byte
	// key signs the token's sessions and their CSRF tokens: changing the
	// token ends them.
	key []byte
	// keySpace is the Idempotency-Key space of the token's holders:
	// tokens differ, so do their keys.
	keySpace string
}

// anonymous is everyone when no token is configured (loopback only).
// There are no sessions then, but CSRF tokens need a secret: a random
// one, per process.
func anonymous() *principal {
	return &principal{name: "anonymous", scope: ScopeAdmin, key: randomKey(), keySpace: "anonymous"}
}

func randomKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return key
}

// principals lists Config.Token (as AdminTokenName, scope admin) and
// Config.Tokens, refusing two of one name or one value: either would make
// a token's holder ambiguous. config.Load checks the same of a file's
// tokens, with the keys' names; these checks hold for a Config built
// without one.
func (c Config) principals() ([]principal, error) {
	all := c.Tokens
	if c.Token != "" {
		all = append([]config.AdminToken{{Name: AdminTokenName, Token: c.Token, Scope: ScopeAdmin.String()}}, all...)
	}
	ps := make([]principal, 0, len(all))
	names, values := map[string]bool{}, map[string]bool{}
	for _, t := range all {
		scope, err := parseScope(t.Scope)
		switch {
		case t.Name == "" || t.Token == "":
			return nil, errors.New("admin: a token needs a name and a value")
		case err != nil:
			return nil, fmt.Errorf("admin: token %s: %w", t.Name, err)
		case names[t.Name]:
			return nil, fmt.Errorf("admin: two tokens named %s", t.Name)
		case values[t.Token]:
			return nil, fmt.Errorf("admin: token %s has the value of another token", t.Name)
		}
		names[t.Name], values[t.Token] = true, true
		ps = append(ps, principal{name: t.Name, scope: scope, hash: sha256.Sum256([]byte(t.Token)),
			key: sessionKey(t.Token), keySpace: tokenKeySpace(t.Token)})
	}
	return ps, nil
}

// principalFor finds the token presented. It compares hashes, as
// ConstantTimeCompare is constant-time only for equal lengths and the hash
// hides the token's length, against every token without stopping at a
// match, so the time taken says nothing of which one matched.
func (s *Server) principalFor(presented string) *principal {
	got := sha256.Sum256([]byte(presented))
	var found *principal
	for i := range s.principals {
		if subtle.ConstantTimeCompare(s.principals[i].hash[:], got[:]) == 1 {
			found = &s.principals[i]
		}
	}
	return found
}

// principalNamed finds a token by name, for a session's.
func (s *Server) principalNamed(name string) *principal {
	for i := range s.principals {
		if s.principals[i].name == name {
			return &s.principals[i]
		}
	}
	return nil
}

// tokenKeySpace is the Idempotency-Key space of a token's holders: a
// function of the token alone, so that its stored keys answer whatever
// other tokens are configured.
func tokenKeySpace(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:8])
}

const principalLocal = "admin.principal"

// principalOf is the request's caller, set by authenticate; nil before it.
func principalOf(c *fiber.Ctx) *principal {
	p, _ := c.Locals(principalLocal).(*principal)
	return p
}
