package admin

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

const authLocal = "admin.auth"

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

// authenticate requires one of the configured tokens as a bearer token,
// as the password of HTTP Basic (so a browser can open the River UI), or a
// session cookie, and records its principal for the routes' scope checks
// and the audit log. With no token configured (allowed on loopback only)
// everyone is "anonymous", with scope admin.
//
// A page loaded with Basic starts a session and is redirected to its own
// URL without userinfo: with the token in the URL
// (http://x:TOKEN@host/riverui/), the page's fetch() calls fail while the
// document's URL holds credentials.
func (s *Server) authenticate(c *fiber.Ctx) error {
	if s.anonymous != nil {
		c.Locals(principalLocal, s.anonymous)
		c.Locals(authLocal, authNone)
		return c.Next()
	}
	header := c.Get(fiber.HeaderAuthorization)
	sess, hasSession := s.sessionOf(c)
	var kind authKind
	var p *principal
	switch {
	case hasSession && header == "":
		kind, p = authCookie, sess.principal
	case header == "":
		// No token presented, no guess: a browser's first request.
		return s.unauthorized(c)
	default:
		// A header is a guess until it matches, a session beside it or
		// not: one session must not try tokens unslowed and unlogged.
		tried, err := s.signIns.try(c, signInVia(header))
		if err != nil {
			return err
		}
		if kind, p = s.tokenIn(header); p == nil {
			s.signIns.failed(c, signInVia(header))
			return s.unauthorized(c)
		}
		s.signIns.giveBack(tried)
	}
	c.Locals(principalLocal, p)
	c.Locals(authLocal, kind)
	if kind == authBasic && c.Method() == fiber.MethodGet && isNavigation(c) &&
		(!hasSession || sess.principal != p || time.Since(sess.issued) > sessionFresh) {
		s.startSession(c, p)
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

// tokenIn finds the token an Authorization header holds, and how it is
// presented; nil when it holds none of ours.
func (s *Server) tokenIn(header string) (authKind, *principal) {
	presented, kind, ok := credential(header)
	if !ok {
		return kind, nil
	}
	return kind, s.principalFor(presented)
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

func authOf(c *fiber.Ctx) authKind {
	k, _ := c.Locals(authLocal).(authKind)
	return k
}
