package redeliver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"
)

// Sentinels a *ListError matches, so the admin API can choose a status
// without importing go-github.
var (
	// ErrUnauthorized: GitHub refused the token (401), or the token lacks
	// the hook scope (403).
	ErrUnauthorized = errors.New("github refused the token")

	// ErrHookNotFound: GitHub answered 404. GitHub also answers 404, not
	// 403, when the token cannot see a private repository or organisation.
	ErrHookNotFound = errors.New("github hook not found (or not visible to the token)")

	// ErrRateLimited: GitHub's primary or secondary rate limit is exhausted.
	ErrRateLimited = errors.New("github rate limit exceeded")
)

// ListError is a failure to list a hook's deliveries, which ends the pass.
// Its text never contains the token.
type ListError struct {
	Hook       string // e.g. `repository "octo/hello" hook 42`
	StatusCode int    // GitHub's HTTP status; 0 when no answer arrived
	Err        error
}

func (e *ListError) Error() string {
	return fmt.Sprintf("redeliver: list deliveries of %s: %v", e.Hook, e.Err)
}

func (e *ListError) Unwrap() error { return e.Err }

func (e *ListError) Is(target error) bool {
	switch target {
	case ErrRateLimited:
		var rl *github.RateLimitError
		var abuse *github.AbuseRateLimitError
		return errors.As(e.Err, &rl) || errors.As(e.Err, &abuse)
	case ErrUnauthorized:
		// A 403 can also be a rate limit; that is not the token's fault.
		return (e.StatusCode == 401 || e.StatusCode == 403) && !e.Is(ErrRateLimited)
	case ErrHookNotFound:
		return e.StatusCode == 404
	}
	return false
}

// redact keeps the token, and any App JWT, out of err's text. go-github's
// messages hold the method, URL and GitHub's message, not headers, so this
// only bites when a
// server (a proxy, a GitHub Enterprise plugin) echoes the Authorization
// header back. Then the chain is cut: an error whose text held the token
// must not be reachable through Unwrap either.
func redact(err error, token string) error {
	if err == nil {
		return err
	}
	msg := err.Error()
	clean := jwtPattern.ReplaceAllString(msg, "[REDACTED]")
	if token != "" {
		clean = strings.ReplaceAll(clean, token, "[REDACTED]")
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}
