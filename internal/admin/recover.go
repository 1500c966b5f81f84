package admin

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
)

// recover runs a provider recovery for the source in the path, since the
// time in ?since= (default: 72 hours ago, the providers' own retry horizon).
func (s *Server) recover(by map[string]Recovery, provider string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		name := c.Params("name")
		run, ok := by[name]
		if !ok {
			if !slices.Contains(s.cfg.Sources, name) {
				return errNotFound(fmt.Sprintf("no source named %q", name))
			}
			return &apiError{http.StatusConflict, CodeNotConfigured,
				fmt.Sprintf("source %q has no %s API settings (sources[].%s in the config)", name, provider, provider)}
		}
		since := time.Now().Add(-72 * time.Hour)
		if q := c.Query("since"); q != "" {
			t, err := optionalTime(q, "since")
			if err != nil {
				return err
			}
			since = *t
		}
		res, err := run(c.UserContext(), since)
		if err != nil {
			return errUpstream(err)
		}
		return c.JSON(res)
	}
}
