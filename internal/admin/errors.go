package admin

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// Error codes of the admin API.
const (
	CodeUnauthorized          = "unauthorized"
	CodeNotFound              = "not_found"
	CodeBadRequest            = "bad_request"
	CodeCrossSite             = "cross_site_request"
	CodeInsufficientScope     = "insufficient_scope" // the token's scope is below the route's
	CodeUnsupportedMediaType  = "unsupported_media_type"
	CodeInvalidIdempotency    = "invalid_idempotency_key"
	CodeIdempotencyKeyReused  = "idempotency_key_reused"
	CodeRequestInProgress     = "request_in_progress"
	CodeNotConfigured         = "not_configured"
	CodeDestinationConfigured = "destination_configured"
	CodeUpstream              = "upstream_error"
	CodeUnavailable           = "unavailable"
	CodeCursorAhead           = "cursor_ahead" // a stream's after is past every id its inbox handed out
	CodeInternal              = "internal_error"
)

// apiError is an error with the status and code it is answered with.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func errBadRequest(msg string) error { return &apiError{http.StatusBadRequest, CodeBadRequest, msg} }
func errNotFound(msg string) error   { return &apiError{http.StatusNotFound, CodeNotFound, msg} }

// errUpstream is a provider API's failure during a recovery call.
func errUpstream(err error) error {
	return &apiError{http.StatusBadGateway, CodeUpstream, err.Error()}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify is the one place that chooses an admin response's status.
func classify(err error) (int, string, string) {
	var ae *apiError
	var fe *fiber.Error
	var st *signInThrottled
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.code, ae.message
	case errors.As(err, &st):
		return http.StatusTooManyRequests, CodeSignInThrottled, st.Error()
	case errors.As(err, &fe):
		switch fe.Code {
		case http.StatusNotFound:
			return fe.Code, CodeNotFound, fe.Message
		case http.StatusUnsupportedMediaType: // a Content-Encoding (httpedge.Guard)
			return fe.Code, CodeUnsupportedMediaType, fe.Message
		case http.StatusMethodNotAllowed, http.StatusBadRequest, http.StatusRequestEntityTooLarge,
			http.StatusRequestHeaderFieldsTooLarge, http.StatusRequestTimeout:
			return fe.Code, CodeBadRequest, fe.Message
		case http.StatusBadGateway:
			// Fiber's answer when the client's connection broke while its
			// request was read: the client's doing, and nobody reads it.
			return http.StatusBadRequest, CodeBadRequest, "the connection broke while the request was read"
		}
		return http.StatusInternalServerError, CodeInternal, "internal error"
	default:
		// The database or the queue: nothing was done, try again.
		return http.StatusServiceUnavailable, CodeUnavailable, "the database is unavailable; retry later"
	}
}

func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	status, code, msg := classify(err)
	if status >= 500 {
		s.logger.Error("admin request failed", "method", c.Method(), "path", c.Path(), "error", err)
		if status == http.StatusServiceUnavailable {
			c.Set(fiber.HeaderRetryAfter, "5")
		}
	}
	if isConsolePage(c) {
		return s.renderError(c, status, code, msg)
	}
	return c.Status(status).JSON(errorBody{Error: errorDetail{Code: code, Message: msg}})
}
