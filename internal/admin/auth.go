package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

const (
	scopeLocal = "admin.scope"
	authLocal  = "admin.auth"
)

// authKind is how a request authenticated. Browsers attach Basic
// credentials and cookies by themselves, to any request to our origin, a
// form another site submits included; they never attach a bearer token.
type authKind int

const (
	authNone   authKind = iota // no token configured (loopback only): nothing to present
	authBearer                 // Authorization: Bearer
	authBasic                  // HTTP Basic, the token as password
	authCookie                 // the session cookie (session.go)
)

// authenticate requires the admin token as a bearer token, as the
// password of HTTP Basic (so a browser can open the River UI), or a
// session cookie. With no token configured (allowed on loopback only)
// everyone is "anonymous".
//
// A page loaded with Basic starts a session and is redirected to its own
// URL without userinfo: with the token in the URL
// (http://x:TOKEN@host/riverui/), the page's fetch() calls fail while the
// document's URL holds credentials.
func (s *Server) authenticate(c *fiber.Ctx) error {
	if s.cfg.Token == "" {
		c.Locals(scopeLocal, "anonymous")
		c.Locals(authLocal, authNone)
		return c.Next()
	}
	header := c.Get(fiber.HeaderAuthorization)
	sess, hasSession := s.sessionOf(c)
	var kind authKind
	var ok bool
	switch {
	case hasSession:
		// A session is the token's already: a header beside it, right
		// or wrong, is no guess.
		if kind, ok = s.tokenIn(header); !ok {
			kind = authCookie
		}
	case header == "":
		// No token presented, no guess: a browser's first request.
		return s.unauthorized(c)
	default:
		tried, err := s.signIns.try(c, signInVia(header))
		if err != nil {
			return err
		}
		if kind, ok = s.tokenIn(header); !ok {
			s.signIns.failed(c, signInVia(header))
			return s.unauthorized(c)
		}
		s.signIns.giveBack(tried)
	}
	// The caller's identity for idempotency scopes: tokens differ, scopes
	// do; a session is its token's.
	c.Locals(scopeLocal, s.scope)
	c.Locals(authLocal, kind)
	if kind == authBasic && c.Method() == fiber.MethodGet && isNavigation(c) &&
		(!hasSession || time.Since(sess.issued) > sessionFresh) {
		s.startSession(c)
		return c.Redirect(ownURL(c), http.StatusSeeOther)
	}
	return c.Next()
}

// unauthorized answers 401, offering both schemes.
func (s *Server) unauthorized(c *fiber.Ctx) error {
	c.Response().Header.Add(fiber.HeaderWWWAuthenticate, `Bearer realm="hookinbox admin"`)
	c.Response().Header.Add(fiber.HeaderWWWAuthenticate, `Basic realm="hookinbox admin", charset="UTF-8"`)
	return &apiError{http.StatusUnauthorized, CodeUnauthorized, "the admin token is missing or wrong (browsers: sign in at /login)"}
}

// tokenIn reports whether an Authorization header holds the admin token,
// and how.
func (s *Server) tokenIn(header string) (authKind, bool) {
	presented, kind, ok := credential(header)
	return kind, ok && s.isToken(presented)
}

// isToken compares hashes: ConstantTimeCompare is constant-time only for
// equal lengths, and the hash hides the token's length.
func (s *Server) isToken(presented string) bool {
	want := sha256.Sum256([]byte(s.cfg.Token))
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

// tokenScope is the idempotency scope of the token's holders.
func tokenScope(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:8])
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
