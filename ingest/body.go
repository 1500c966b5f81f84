package ingest

import (
	"errors"
	"net"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/internal/httpedge"
)

// errBodyTimeout is a body that did not arrive within ReadTimeout.
var errBodyTimeout = fiber.NewError(http.StatusRequestTimeout, "the body did not arrive within read_timeout")

// errBodyUnreadable is a body the connection broke off or garbled
// (a malformed chunk).
var errBodyUnreadable = fiber.NewError(http.StatusBadRequest, "the body could not be read")

// readBody reads c's body as it arrives, at most max bytes, into a buffer
// of its own.
func readBody(c *fiber.Ctx, max int) ([]byte, error) {
	body, err := httpedge.ReadBody(c, max)
	var ne net.Error
	switch {
	case err == nil:
		return body, nil
	case errors.Is(err, httpedge.ErrBodyTooLarge):
		return nil, fiber.ErrRequestEntityTooLarge
	case errors.As(err, &ne) && ne.Timeout():
		return nil, errBodyTimeout
	default:
		return nil, errBodyUnreadable
	}
}
