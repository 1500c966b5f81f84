package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// listDestinations is GET /admin/destinations: every destination's
// health.
func (s *Server) listDestinations(c *fiber.Ctx) error {
	items := []destination.Status{}
	if s.cfg.Destinations != nil {
		sts, err := s.cfg.Destinations.Statuses(c.UserContext())
		if err != nil {
			return err
		}
		items = append(items, sts...)
	}
	return c.JSON(fiber.Map{"items": items})
}

// setPaused is POST /admin/destinations/{name}/pause and /resume.
func (s *Server) setPaused(paused bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		name, err := s.destinationName(c)
		if err != nil {
			return err
		}
		if err := s.cfg.Destinations.SetPausedTx(c.UserContext(), tx(c), name, paused); err != nil {
			return destinationError(name, err)
		}
		state := "active"
		if paused {
			state = "paused"
		}
		return c.JSON(fiber.Map{"name": name, "paused": paused, "state": state})
	}
}

// retryRequest is POST /admin/destinations/{name}/retry's body.
type retryRequest struct {
	Status string `json:"status"`
	Since  string `json:"since"`
}

// retryDestination sends again, with their same keys, a destination's
// sends that failed for good since a time.
func (s *Server) retryDestination(c *fiber.Ctx) error {
	name, err := s.destinationName(c)
	if err != nil {
		return err
	}
	var req retryRequest
	dec := json.NewDecoder(bytesReader(c.Body()))
	dec.DisallowUnknownFields()
	if err := decodeOne(dec, &req); err != nil {
		return errBadRequest(`body must be one JSON object: {"status":"failed","since":"<RFC 3339>"}: ` + err.Error())
	}
	if req.Status != "failed" {
		return errBadRequest(`status must be "failed": only sends that failed for good are retried`)
	}
	since := time.Time{}
	if req.Since != "" {
		t, err := optionalTime(req.Since, "since")
		if err != nil {
			return err
		}
		since = *t
	}
	n, err := s.cfg.Destinations.RetryFailedTx(c.UserContext(), tx(c), name, since)
	if err != nil {
		return destinationError(name, err)
	}
	return c.Status(http.StatusAccepted).JSON(fiber.Map{"name": name, "retried": n, "max": destination.MaxRetry})
}

// abandonDestination is POST /admin/destinations/{name}/abandon: an
// operator fails the unfinished sends of a destination that no running
// process has any more (state unknown), freeing its deliveries for
// retention. A destination some running process has is refused: its sends
// are that process's to make.
func (s *Server) abandonDestination(c *fiber.Ctx) error {
	name := strings.Clone(c.Params("name")) // c.Params points into a reused buffer
	if s.cfg.Destinations == nil {
		return errNotFound(fmt.Sprintf("no destination named %q has unfinished sends", name))
	}
	n, err := s.cfg.Destinations.AbandonTx(c.UserContext(), tx(c), name)
	switch {
	case errors.Is(err, destination.ErrConfigured):
		return &apiError{http.StatusConflict, CodeDestinationConfigured, fmt.Sprintf(
			"destination %q is configured on a running process, which sends its sends; remove it from every config first", name)}
	case errors.Is(err, destination.ErrNoSends):
		return errNotFound(fmt.Sprintf("no destination named %q has unfinished sends", name))
	case err != nil:
		return err
	}
	return c.JSON(fiber.Map{"name": name, "failed": n})
}

func (s *Server) destinationName(c *fiber.Ctx) (string, error) {
	name := c.Params("name")
	if s.cfg.Destinations == nil {
		return "", errNotFound(fmt.Sprintf("no destination named %q (none configured)", name))
	}
	for _, n := range s.cfg.Destinations.Names() {
		if n == name {
			return n, nil // the configured name: c.Params points into a reused buffer
		}
	}
	return "", errNotFound(fmt.Sprintf("no destination named %q", name))
}

func destinationError(name string, err error) error {
	if errors.Is(err, destination.ErrNotFound) {
		return errNotFound(fmt.Sprintf("no destination named %q", name))
	}
	return err
}
