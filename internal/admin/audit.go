package admin

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"
)

// operationLocal names the API operation a request ran (mutation), for
// its audit line.
const operationLocal = "admin.operation"

// audit logs every state-changing request once it is answered: who (the
// token's name, never its value), how it authenticated, what and with
// what outcome. A refusal (403 of the scope or the cross-site check) is
// logged too: an attempt is worth an operator's eye. GET, HEAD and
// OPTIONS change nothing and are not logged.
func (s *Server) audit(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	if err := c.Next(); err != nil {
		// Answer now, as Fiber would after us, to log the status sent.
		if err := s.errorHandler(c, err); err != nil {
			return err
		}
	}
	attrs := []slog.Attr{slog.String("token", principalOf(c).name), slog.String("via", authOf(c).String()),
		slog.String("method", c.Method()), slog.String("path", c.Path()), slog.Int("status", c.Response().StatusCode()),
		slog.String("remote_addr", c.Context().RemoteAddr().String())}
	if op, ok := c.Locals(operationLocal).(string); ok {
		attrs = append(attrs, slog.String("operation", op))
	}
	s.logger.LogAttrs(c.UserContext(), slog.LevelInfo, "admin audit", attrs...)
	return nil
}

func (k authKind) String() string {
	switch k {
	case authBearer:
		return "bearer"
	case authBasic:
		return "basic"
	case authCookie:
		return "session"
	}
	return "none"
}
