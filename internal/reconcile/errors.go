package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/stripe/stripe-go/v85"
)

// ErrAuthentication means Stripe refused the API key (HTTP 401): it is
// wrong, revoked, or for another account. Retrying will not help.
var ErrAuthentication = errors.New("stripe refused the API key")

// APIError is an error answer from Stripe's Events API. It carries what an
// operator needs and nothing that could hold the key: stripe-go's own error
// is not kept, because its message may quote the key.
type APIError struct {
	StatusCode int    // HTTP status, e.g. 401
	Type       string // Stripe's error type, e.g. "invalid_request_error"
	Code       string // Stripe's error code, often empty
	Message    string // Stripe's message with the API key removed
	RequestID  string // Stripe's Request-Id, for their support
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("stripe API: HTTP %d", e.StatusCode)
	if e.Type != "" {
		msg += " " + e.Type
	}
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " [request " + e.RequestID + "]"
	}
	return msg
}

// Is makes errors.Is(err, ErrAuthentication) true for a 401.
func (e *APIError) Is(target error) bool {
	return target == ErrAuthentication && e.StatusCode == http.StatusUnauthorized
}

// redacted replaces the API key wherever an error message might echo it.
const redacted = "[redacted]"

// scrubKey turns an error from stripe-go into one whose message cannot
// contain key. Stripe's own 401 message quotes a masked key, but a proxy or
// a future API may echo it whole, and stripe-go puts response bodies into
// its decoding errors verbatim.
func scrubKey(err error, key string) error {
	var se *stripe.Error
	if errors.As(err, &se) {
		return &APIError{
			StatusCode: se.HTTPStatusCode,
			Type:       string(se.Type),
			Code:       string(se.Code),
			Message:    strings.ReplaceAll(se.Msg, key, redacted),
			RequestID:  se.RequestID,
		}
	}
	if key != "" && strings.Contains(err.Error(), key) {
		// Unwrapping would hand the key back, so the chain is cut here.
		return errors.New(strings.ReplaceAll(err.Error(), key, redacted))
	}
	// Transport errors (timeouts, refused connections, a cancelled
	// context) name the URL, never the Authorization header; keep them
	// wrapped so callers can test for context.Canceled.
	return err
}
