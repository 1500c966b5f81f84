package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// readyTimeout bounds readyz's look at the database.
const readyTimeout = 3 * time.Second

// readyz is GET /readyz on the admin listener: whether the database
// answers, with the driver's error when it does not. The ingest listener's
// /readyz may be public and says only "database unavailable"; operators
// read the detail here, behind the token.
func (s *Server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), readyTimeout)
	defer cancel()
	if err := s.cfg.Pool.Ping(ctx); err != nil {
		return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{
			"status": "unavailable", "reason": "database unavailable", "error": err.Error()})
	}
	return c.JSON(fiber.Map{"status": "ready"})
}
