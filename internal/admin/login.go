package admin

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
)

var (
	//go:embed login.html
	loginHTML string
	loginTmpl = template.Must(template.New("login").Parse(loginHTML))
)

// defaultNext is where a sign-in goes when it names nowhere (or somewhere
// that is not a path on this server).
const defaultNext = "/console/"

type loginView struct {
	SignedIn  bool
	Token     string // the signed-in token's name
	Scope     string
	Next      string
	CSRFToken string
	Error     string
}

// loginPage is GET /login: a form posting the token, or, for a signed-in
// browser, a sign-out form carrying the session's CSRF token.
func (s *Server) loginPage(c *fiber.Ctx) error {
	next := safeNext(c.Query("next"))
	if s.anonymous != nil {
		return c.Redirect(next, http.StatusSeeOther) // nothing to sign in to
	}
	v := loginView{Next: next, CSRFToken: s.csrfToken(c)}
	if sess, ok := s.sessionOf(c); ok {
		v.SignedIn, v.Token, v.Scope = true, sess.principal.name, sess.principal.scope.String()
	}
	return s.renderLogin(c, http.StatusOK, v)
}

// login is POST /login: the form's token starts a session. Only a form of
// our own origin may sign a browser in (else another site could sign it
// in to a session of its choosing).
func (s *Server) login(c *fiber.Ctx) error {
	if !sameOrigin(c) {
		return errCrossSite
	}
	next := safeNext(formField(c, "next"))
	if s.anonymous != nil {
		return c.Redirect(next, http.StatusSeeOther)
	}
	tried, err := s.signIns.try(c, "form")
	if err != nil {
		return s.renderLogin(c, http.StatusTooManyRequests, loginView{Next: next, Error: "Too many wrong tokens from this address: " +
			"try again in " + c.GetRespHeader(fiber.HeaderRetryAfter) + " s."})
	}
	p := s.principalFor(formField(c, "token"))
	if p == nil {
		s.signIns.failed(c, "form")
		// No WWW-Authenticate: it would raise the Basic prompt over the form.
		return s.renderLogin(c, http.StatusUnauthorized, loginView{Next: next, Error: "That is not an admin token."})
	}
	s.signIns.giveBack(tried)
	s.startSession(c, p)
	s.logger.Info("admin sign-in", "token", p.name, "scope", p.scope.String(), "remote_addr", c.Context().RemoteAddr().String())
	return c.Redirect(next, http.StatusSeeOther)
}

// logout is POST /logout: it deletes the session cookie. Like every
// state-changing request with browser credentials, it must come from our
// origin or carry the session's CSRF token.
func (s *Server) logout(c *fiber.Ctx) error {
	if !sameOrigin(c) && !s.validCSRF(c) {
		return errCrossSite
	}
	s.endSession(c)
	return c.Redirect("/login", http.StatusSeeOther)
}

func (s *Server) renderLogin(c *fiber.Ctx, status int, v loginView) error {
	var out bytes.Buffer
	if err := loginTmpl.Execute(&out, v); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).Send(out.Bytes())
}

// safeNext keeps a sign-in's destination on this server: a path, never
// "//host" or "/\host", which browsers read as another host. Browsers
// also drop tabs and newlines from URLs ("/\t/host" is "//host"), and a
// backslash reads as a slash: any of them, or a space, makes it the
// default.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r <= ' ' || r == '\\' || r == 0x7f }) {
		return defaultNext
	}
	return next
}
