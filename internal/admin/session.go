package admin

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// SessionCookie is the cookie of a signed-in browser: River UI's pages
// and the console share it (Path=/).
const SessionCookie = "hookinbox_session"

// A session is stateless: the cookie holds when it was issued, a random
// id, and the name and scope of the token that signed in (never the
// token), signed with a key derived from that token. Changing a token, or
// its scope, ends its sessions, and so does removing it: the server knows
// its tokens from its config, so a session of a token removed from it
// stops working when the server restarts with the new config. No table is
// needed. Its CSRF token is derived from the id, for requests that cannot
// show their origin.
type session struct {
	issued    time.Time
	id        [16]byte
	principal *principal
}

const (
	// sessionFixedLen is the payload before the token's name: the issue
	// time, the id and the scope.
	sessionFixedLen = 8 + 16 + 1
	sessionMACLen   = sha256.Size
	// sessionFresh is how long after it was issued a session is not
	// re-issued on a Basic-authenticated navigation. A browser re-sends
	// Basic credentials it cached, so an older session is re-issued with a
	// redirect (the URL may hold credentials again); a fresher one is the
	// redirect's own, and redirecting again would loop.
	sessionFresh = 30 * time.Second
)

// sessionKey derives a token's signing key.
func sessionKey(token string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("hookinbox admin session key v1"))
	return m.Sum(nil)
}

func mac(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// startSession sets a new session's cookie for p on the response.
func (s *Server) startSession(c *fiber.Ctx, p *principal) {
	payload := make([]byte, sessionFixedLen, sessionFixedLen+len(p.name))
	binary.BigEndian.PutUint64(payload, uint64(time.Now().Unix()))
	_, _ = rand.Read(payload[8:24])
	payload[24] = byte(p.scope)
	payload = append(payload, p.name...)
	value := append(payload, mac(p.key, []byte("session\x00"), payload)...)
	s.setSessionCookie(c, base64.RawURLEncoding.EncodeToString(value), int(s.cfg.SessionTTL.Seconds()))
}

// endSession deletes the browser's cookie. The session itself stays valid
// until it expires (nothing stores it): changing its token ends it.
func (s *Server) endSession(c *fiber.Ctx) { s.setSessionCookie(c, "", 0) }

// setSessionCookie sets the cookie to value for maxAge seconds; maxAge 0
// deletes it (an expiry in the past).
func (s *Server) setSessionCookie(c *fiber.Ctx, value string, maxAge int) {
	cookie := &fiber.Cookie{
		Name: SessionCookie, Value: value, Path: "/", MaxAge: maxAge,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https",
	}
	if maxAge == 0 {
		cookie.Expires = fasthttp.CookieExpireDelete
	}
	c.Cookie(cookie)
}

// sessionOf returns the request's session when its cookie is ours,
// unaltered and unexpired, and names a configured token with the scope it
// has now. A name no token has is checked against a key of its own, so
// that a forged cookie takes as long whether or not its name exists.
func (s *Server) sessionOf(c *fiber.Ctx) (session, bool) {
	if s.anonymous != nil {
		return session{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(c.Cookies(SessionCookie))
	if err != nil || len(raw) <= sessionFixedLen+sessionMACLen {
		return session{}, false
	}
	payload, sum := raw[:len(raw)-sessionMACLen], raw[len(raw)-sessionMACLen:]
	p := s.principalNamed(string(payload[sessionFixedLen:]))
	key := s.unknownKey
	if p != nil {
		key = p.key
	}
	if !hmac.Equal(sum, mac(key, []byte("session\x00"), payload)) || p == nil || Scope(payload[24]) != p.scope {
		return session{}, false
	}
	sess := session{issued: time.Unix(int64(binary.BigEndian.Uint64(payload)), 0), principal: p}
	copy(sess.id[:], payload[8:24])
	if time.Since(sess.issued) > s.cfg.SessionTTL {
		return session{}, false
	}
	return sess, true
}

// csrfToken is the token a page of ours embeds in its forms (field
// csrf_token) or sends as X-CSRF-Token: one per session, or one per
// process when no token is configured. "" when the request has neither.
func (s *Server) csrfToken(c *fiber.Ctx) string {
	if s.anonymous != nil {
		return base64.RawURLEncoding.EncodeToString(mac(s.anonymous.key, []byte("csrf\x00")))
	}
	sess, ok := s.sessionOf(c)
	if !ok {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(mac(sess.principal.key, []byte("csrf\x00"), sess.id[:]))
}

// validCSRF reports whether the request carries its session's CSRF token,
// in the X-CSRF-Token header or a form's csrf_token field.
func (s *Server) validCSRF(c *fiber.Ctx) bool {
	want := s.csrfToken(c)
	if want == "" {
		return false
	}
	got := c.Get("X-CSRF-Token")
	if got == "" {
		got = formField(c, "csrf_token")
	}
	return hmac.Equal([]byte(got), []byte(want))
}

// formField reads a field of an application/x-www-form-urlencoded body
// (what an HTML form posts), never the query string: a token in a URL
// ends up in logs and histories.
func formField(c *fiber.Ctx, name string) string {
	return string(c.Request().PostArgs().Peek(name))
}

// isNavigation reports whether a browser is loading a page (not a
// script's fetch): Sec-Fetch-* where the browser sends them, else Accept.
func isNavigation(c *fiber.Ctx) bool {
	if mode := c.Get("Sec-Fetch-Mode"); mode != "" {
		return mode == "navigate" && c.Get("Sec-Fetch-Dest") == "document"
	}
	return strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMETextHTML)
}

// ownURL is the request's URL, absolute and without userinfo (browsers
// never send userinfo in Host). A relative Location would keep the
// credentials of a URL such as http://x:TOKEN@host/riverui/.
func ownURL(c *fiber.Ctx) string {
	return c.Protocol() + "://" + string(c.Request().Host()) + c.OriginalURL()
}
