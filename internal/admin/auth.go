package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
)

const (
	scopeLocal = "admin.scope"
	authLocal  = "admin.auth"
)

// authKind is how a request authenticated. Browsers attach Basic
// credentials (and cookies) by themselves, to any request to our origin,
// a form another site submits included; they never attach a bearer token.
type authKind int

const (
	authNone   authKind = iota // no token configured (loopback only): nothing to present
	authBearer                 // Authorization: Bearer
	authBasic                  // HTTP Basic, the token as password
)

// authenticate requires the admin token as a bearer token, or as the
// password of HTTP Basic (so a browser can open the River UI). With no
// token configured (allowed on loopback only) everyone is "anonymous".
func (s *Server) authenticate(c *fiber.Ctx) error {
	if s.cfg.Token == "" {
		c.Locals(scopeLocal, "anonymous")
		c.Locals(authLocal, authNone)
		return c.Next()
	}
	presented, kind, ok := credential(c.Get(fiber.HeaderAuthorization))
	// Compare hashes: ConstantTimeCompare is constant-time only for equal
	// lengths, and the hash hides the token's length.
	want := sha256.Sum256([]byte(s.cfg.Token))
	got := sha256.Sum256([]byte(presented))
	if !ok || subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		c.Response().Header.Add(fiber.HeaderWWWAuthenticate, `Bearer realm="hookinbox admin"`)
		c.Response().Header.Add(fiber.HeaderWWWAuthenticate, `Basic realm="hookinbox admin", charset="UTF-8"`)
		return &apiError{http.StatusUnauthorized, CodeUnauthorized, "the admin token is missing or wrong"}
	}
	// The caller's identity for idempotency scopes: tokens differ, scopes do.
	c.Locals(scopeLocal, "token:"+hex.EncodeToString(got[:8]))
	c.Locals(authLocal, kind)
	return c.Next()
}

// credential extracts the token from "Bearer <token>" or from Basic's
// password (the user name is ignored).
func credential(header string) (string, authKind, bool) {
	scheme, value, ok := strings.Cut(header, " ")
	if !ok {
		return "", authNone, false
	}
	switch strings.ToLower(scheme) {
	case "bearer":
		return strings.TrimSpace(value), authBearer, true
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil {
			return "", authNone, false
		}
		_, password, ok := strings.Cut(string(raw), ":")
		return password, authBasic, ok
	}
	return "", authNone, false
}

func scopeOf(c *fiber.Ctx) string {
	s, _ := c.Locals(scopeLocal).(string)
	return s
}

func authOf(c *fiber.Ctx) authKind {
	k, _ := c.Locals(authLocal).(authKind)
	return k
}
