package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// QueueDownstream is the queue of follow-up jobs that call other systems,
// apart from inbox processing so slow downstreams cannot starve it.
const QueueDownstream = "downstream"

// DefaultDownstreamTimeout bounds one downstream call: downstream.timeout's
// default.
const DefaultDownstreamTimeout = config.DefaultDownstreamTimeout

// MaxRetryAfter bounds how long a downstream's Retry-After may make a job
// wait, so that a wrong header cannot park a job for days.
const MaxRetryAfter = time.Hour

// DefaultFinalStatuses are the statuses that mean a downstream's final "no"
// when a caller names none: 422 Unprocessable Entity.
var DefaultFinalStatuses = []int{http.StatusUnprocessableEntity}

// CheckFinalStatuses accepts statuses that can mean a final refusal: 4xx,
// except 409 (under the Idempotency-Key draft and Stripe's API, "a request
// with this key is still in progress") and 429 (too many requests), which
// both ask to retry later.
func CheckFinalStatuses(statuses []int) error {
	for _, s := range statuses {
		switch {
		case s < 400 || s > 499:
			return fmt.Errorf("%d is not a 4xx status", s)
		case s == http.StatusConflict:
			return errors.New("409 means a request with the same key is in progress, never a refusal")
		case s == http.StatusTooManyRequests:
			return errors.New("429 asks to retry later, never a refusal")
		}
	}
	return nil
}

// RefusedError is a downstream's deliberate, final "no" to a request (422
// Unprocessable Entity, or another of Call.FinalStatuses): retrying with the
// same key gets the same answer, so the caller compensates instead.
type RefusedError struct {
	Status int
	Body   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("downstream refused the request: %d %s", e.Status, e.Body)
}

// RetryLaterError is a downstream's "not now": 409 Conflict (a request with
// the same key is still being processed, typically our own first attempt
// that outlived its timeout: the retry must wait for it, not give up), 429
// Too Many Requests or 503 Service Unavailable. After is the response's
// Retry-After (at most MaxRetryAfter), 0 when it has none.
type RetryLaterError struct {
	Status int
	After  time.Duration
	Body   string
}

func (e *RetryLaterError) Error() string {
	return fmt.Sprintf("downstream asked to retry later: %d (Retry-After %s) %s", e.Status, e.After, e.Body)
}

// Call is one POST to a downstream with an Idempotency-Key.
type Call struct {
	// URL receives the POST. Required.
	URL string
	// Key is sent as Idempotency-Key. Send the same key on every retry of
	// the same intent (Event.Key, Event.KeyFor), so that the downstream
	// applies it once. Required.
	Key string
	// Body is sent as is.
	Body []byte
	// ContentType defaults to application/json.
	ContentType string
	// Header holds more headers to send.
	Header http.Header
	// FinalStatuses are the 4xx statuses that mean a final refusal
	// (*RefusedError); see CheckFinalStatuses. Defaults to
	// DefaultFinalStatuses.
	FinalStatuses []int
}

// defaultHTTPClient serves calls whose caller names no client.
var defaultHTTPClient = &http.Client{Timeout: DefaultDownstreamTimeout}

// Post makes the call with client (nil: a client with a
// DefaultDownstreamTimeout timeout) and classifies the answer:
//
//   - 2xx: nil;
//   - a final status (FinalStatuses): *RefusedError;
//   - 409, 429 and 503: *RetryLaterError;
//   - another 4xx: a permanent error (our request is wrong; retrying will
//     not fix it);
//   - another 5xx, a timeout or a connection failure: a plain, retryable
//     error.
//
// It returns the status, 0 when there was no answer. A retry sends the same
// key, so a request the downstream applied before its response was lost is
// not applied again.
func (c Call) Post(ctx context.Context, client *http.Client) (status int, err error) {
	if c.Key == "" {
		return 0, Permanent(fmt.Errorf("POST %s: no Idempotency-Key", outbound.MaskURL(c.URL)))
	}
	if client == nil {
		client = defaultHTTPClient
	}
	// A redirect is an answer, never followed: following it would turn the
	// POST into a GET and carry the Idempotency-Key and the caller's
	// headers to whatever host the Location names.
	client = outbound.NoRedirects(client)
	shown := outbound.MaskURL(c.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return 0, Permanent(outbound.MaskError(err)) // names the URL
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	if c.ContentType != "" {
		req.Header.Set("Content-Type", c.ContentType)
	}
	req.Header.Set("Idempotency-Key", c.Key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, outbound.MaskError(err) // names the URL, query and all
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	body = bytes.TrimSpace(body)
	final := c.FinalStatuses
	if final == nil {
		final = DefaultFinalStatuses
	}
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return s, nil
	case slices.Contains(final, s):
		return s, &RefusedError{Status: s, Body: string(body)}
	case s == http.StatusConflict || s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable:
		return s, &RetryLaterError{Status: s, After: retryAfter(resp.Header.Get("Retry-After")), Body: string(body)}
	case outbound.IsRedirect(s):
		// Retried, not refused: a wrong URL is the operator's to fix, and
		// a final "no" would compensate for a call nobody refused.
		return s, fmt.Errorf("POST %s: %s", shown, outbound.RedirectError(s, resp.Header.Get("Location")))
	case s >= 500:
		return s, fmt.Errorf("POST %s: %s", shown, resp.Status)
	default:
		return s, Permanent(fmt.Errorf("POST %s: %s %s", shown, resp.Status, body))
	}
}

// retryAfter reads Retry-After, in seconds or as an HTTP date; 0 when it
// is absent or unreadable.
func retryAfter(v string) time.Duration {
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = time.Until(at)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// JobResult turns the error of a follow-up job's call into what River
// should do with the job:
//
//   - nil: complete it;
//   - *RefusedError or a permanent error: cancel it (retrying cannot help);
//   - *RetryLaterError with a Retry-After: snooze it that long, which
//     spends no attempt. A job snoozes at most job.MaxAttempts times; after
//     that it is retried like any error, so a downstream that never stops
//     asking to wait still exhausts the job's attempts and is seen;
//   - anything else: retry it with River's backoff, spending an attempt.
func JobResult(job *rivertype.JobRow, err error) error {
	var later *RetryLaterError
	switch {
	case err == nil:
		return nil
	case IsPermanent(err) || errors.As(err, new(*RefusedError)):
		return river.JobCancel(err)
	case errors.As(err, &later) && later.After > 0 && riverdb.Snoozes(job) < job.MaxAttempts:
		return river.JobSnooze(later.After)
	}
	return err
}

// GivesUp reports whether River will not run job again after result, the
// value its worker returns (JobResult's answer): the job is cancelled, or
// it failed on its last attempt and will be discarded. A follow-up job
// that a saga waits on records the failure then, so that the saga never
// waits on a job that will not come back.
func GivesUp(job *rivertype.JobRow, result error) bool {
	if result == nil || errors.As(result, new(*river.JobSnoozeError)) {
		return false
	}
	return errors.As(result, new(*river.JobCancelError)) || job.Attempt >= job.MaxAttempts
}
