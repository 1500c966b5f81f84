package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/verify"
)

// Error codes are part of the API: clients and dashboards match on them.
const (
	CodeUnknownSource           = "unknown_source"
	CodeMissingHeader           = "missing_header"
	CodeInvalidHeader           = "invalid_header"
	CodeInvalidPayload          = "invalid_payload"
	CodeInvalidSignature        = "invalid_signature"
	CodeTimestampOutOfTolerance = "timestamp_out_of_tolerance"
	CodePayloadTooLarge         = "payload_too_large"
	CodeDeliveryIDConflict      = "delivery_id_conflict"
	CodeUnavailable             = "unavailable"
	CodeNotFound                = "not_found"
	CodeMethodNotAllowed        = "method_not_allowed"
	CodeRequestHeadersTooLarge  = "request_headers_too_large"
	CodeRequestTimeout          = "request_timeout"
	CodeBadRequest              = "bad_request"
	CodeInternal                = "internal_error"
)

// retryAfterSeconds is what a 503 asks the provider to wait. Providers use
// their own backoff anyway; this is a hint for everyone else.
const retryAfterSeconds = "5"

// errUnknownSource is raised by the router for a source not in the config.
var errUnknownSource = errors.New("no source with this name is configured")

// errNULInHeader: a header value holds a NUL byte. HTTP forbids it, and
// the inbox's jsonb headers cannot store it: left in, the delivery would
// fail to store on every retry (and, batched, fail its neighbours).
var errNULInHeader = errors.New("a header value contains a NUL byte")

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify is the one place that chooses a status code for an error.
func classify(err error) (status int, code string) {
	var fe *fiber.Error
	switch {
	case errors.Is(err, errUnknownSource):
		return http.StatusNotFound, CodeUnknownSource
	case errors.Is(err, verify.ErrMissingHeader):
		return http.StatusBadRequest, CodeMissingHeader
	case errors.Is(err, errNULInHeader):
		return http.StatusBadRequest, CodeInvalidHeader
	case errors.Is(err, verify.ErrInvalidPayload):
		return http.StatusBadRequest, CodeInvalidPayload
	case errors.Is(err, verify.ErrInvalidSignature):
		return http.StatusUnauthorized, CodeInvalidSignature
	case errors.Is(err, verify.ErrTimestampOutOfTolerance):
		return http.StatusUnauthorized, CodeTimestampOutOfTolerance
	case errors.Is(err, ErrDeliveryConflict):
		return http.StatusConflict, CodeDeliveryIDConflict
	case errors.Is(err, verify.ErrUnavailable):
		// A provider's verification API did not answer: not the sender's
		// fault, so never a 4xx, and never a 2xx for what was not checked.
		return http.StatusServiceUnavailable, CodeUnavailable
	case errors.As(err, &fe):
		// Raised by Fiber/fasthttp before our handler runs.
		switch fe.Code {
		case http.StatusRequestEntityTooLarge:
			return fe.Code, CodePayloadTooLarge
		case http.StatusNotFound:
			return fe.Code, CodeNotFound
		case http.StatusMethodNotAllowed:
			return fe.Code, CodeMethodNotAllowed
		case http.StatusRequestHeaderFieldsTooLarge:
			return fe.Code, CodeRequestHeadersTooLarge
		case http.StatusRequestTimeout:
			return fe.Code, CodeRequestTimeout
		case http.StatusBadRequest:
			return fe.Code, CodeBadRequest
		case http.StatusBadGateway:
			// Fiber's answer when the client's connection broke while its
			// request was read: the client's doing, nobody reads it, and as a
			// 4xx it is logged at the refusals' rate, not once a request.
			return http.StatusBadRequest, CodeBadRequest
		}
		return http.StatusInternalServerError, CodeInternal
	default:
		// Anything else is the database or the queue: the delivery was not
		// stored, so ask the provider to retry. Never a 2xx.
		return http.StatusServiceUnavailable, CodeUnavailable
	}
}

// sourceLabel is the configured source the request's path names, or
// unknownSource: never a name taken from the request, which could be
// anything (and, from Fiber, points into a reused buffer).
func (s *Server) sourceLabel(c *fiber.Ctx) string {
	name, ok := strings.CutPrefix(string(c.Request().URI().Path()), "/webhooks/")
	if src, known := s.sources[name]; ok && known {
		return src.Name
	}
	return unknownSource
}

// errorHandler renders every error, ours or Fiber's, as errorBody.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	status, code := classify(err)
	source := s.sourceLabel(c)
	if status == http.StatusRequestHeaderFieldsTooLarge || (status == http.StatusRequestTimeout && !errors.Is(err, errBodyTimeout)) {
		// Refused before routing: observe here.
		s.cfg.Observe(source, code, 0)
	}
	msg := err.Error()
	if status == http.StatusRequestEntityTooLarge {
		// fasthttp's text names no size; the sender needs both to act.
		msg = fmt.Sprintf("the body is over max_body_bytes (%d bytes)", s.cfg.MaxBodyBytes)
		if n := c.Request().Header.ContentLength(); n > 0 {
			msg = fmt.Sprintf("the body is %d bytes, over max_body_bytes (%d bytes)", n, s.cfg.MaxBodyBytes)
		}
	}
	if status < 500 {
		s.rejects.log(c.UserContext(), time.Now(), source, code, status, c.IP(), msg)
	}
	switch status {
	case http.StatusServiceUnavailable:
		c.Set(fiber.HeaderRetryAfter, retryAfterSeconds)
		// The cause is for our logs, not for the caller.
		s.logger.Error("delivery not stored", "path", c.Path(), "error", err)
		msg = "could not store the delivery; retry later"
		if errors.Is(err, verify.ErrUnavailable) {
			msg = "could not verify the delivery now; retry later"
		}
	case http.StatusInternalServerError:
		s.logger.Error("internal error", "path", c.Path(), "error", err)
		msg = "internal error"
	}
	return c.Status(status).JSON(errorBody{Error: errorDetail{Code: code, Message: msg}})
}
