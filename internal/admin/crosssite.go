package admin

import (
	"mime"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// refuseCrossSite refuses a state-changing request that rides on
// credentials a browser attaches by itself (Basic, the session cookie;
// nothing at all when no token is configured) unless it comes from our own
// origin or carries its session's CSRF token. A bearer token is never
// attached by a browser, so bearer calls pass. It runs before every route,
// River UI's API included, so a refused request does nothing and stores
// nothing under its Idempotency-Key.
func (s *Server) refuseCrossSite(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		// A cross-site GET cannot read our answer, and changes nothing.
		return c.Next()
	}
	switch {
	case authOf(c) == authBearer, sameOrigin(c), s.validCSRF(c):
		return c.Next()
	case authOf(c) == authNone && c.Get("Sec-Fetch-Site") == "" && c.Get(fiber.HeaderOrigin) == "":
		// No token, and no browser made this request (browsers send Origin
		// with every POST, PUT, PATCH and DELETE): the CLI, curl.
		return c.Next()
	}
	return errCrossSite
}

var errCrossSite = &apiError{http.StatusForbidden, CodeCrossSite,
	"a state-changing request with browser credentials must come from this origin (Sec-Fetch-Site: same-origin, an Origin equal to this server's, or the page's X-CSRF-Token); other clients use Authorization: Bearer"}

// sameOrigin reports whether the browser says the request comes from a
// page of our own origin: Sec-Fetch-Site where the browser sends it (HTTPS
// and loopback), else Origin against the scheme and Host the request came
// to. "same-site" is not enough: another port of this host is same-site.
func sameOrigin(c *fiber.Ctx) bool {
	switch c.Get("Sec-Fetch-Site") {
	case "same-origin":
		return true
	case "":
		origin := c.Get(fiber.HeaderOrigin)
		return origin != "" && origin == c.Protocol()+"://"+string(c.Request().Host())
	}
	return false
}

// requireJSON refuses a body that does not say it is JSON. A form on
// another site can send text/plain or a form encoding without a CORS
// preflight, never application/json. It runs before the Idempotency-Key
// is claimed, so the corrected retry is not answered with this refusal.
func requireJSON(c *fiber.Ctx) error {
	mediaType, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mediaType != fiber.MIMEApplicationJSON {
		return &apiError{http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"the body must be JSON sent with Content-Type: application/json"}
	}
	return c.Next()
}
