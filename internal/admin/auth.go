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

const scopeLocal = "admin.scope"

// authenticate requires the admin token as a bearer token, or as the
// password of HTTP Basic (so a browser can open the River UI). With no
// token configured (allowed on loopback only) everyone is "anonymous".
func (s *Server) authenticate(c *fiber.Ctx) error {
	if s.cfg.Token == "" {
		c.Locals(scopeLocal, "anonymous")
		return c.Next()
	}
	presented, ok := credential(c.Get(fiber.HeaderAuthorization))
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
	return c.Next()
}

// credential extracts the token from "Bearer <token>" or from Basic's
// password (the user name is ignored).
func credential(header string) (string, bool) {
	scheme, value, ok := strings.Cut(header, " ")
	if !ok {
		return "", false
	}
	switch strings.ToLower(scheme) {
	case "bearer":
		return strings.TrimSpace(value), true
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil {
			return "", false
		}
		_, password, ok := strings.Cut(string(raw), ":")
		return password, ok
	}
	return "", false
}

func scopeOf(c *fiber.Ctx) string {
	s, _ := c.Locals(scopeLocal).(string)
	return s
}
