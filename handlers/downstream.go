package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/riverqueue/river"
)

// QueueDownstream is the queue of follow-up jobs that call other systems,
// apart from inbox processing so slow downstreams cannot starve it.
const QueueDownstream = "downstream"

// DefaultDownstreamTimeout bounds one downstream call.
const DefaultDownstreamTimeout = 10 * time.Second

// RefusedError is a downstream's deliberate, final "no" to a request (409
// Conflict or 422 Unprocessable Entity): retrying with the same key gets the
// same answer, so the caller compensates instead.
type RefusedError struct {
	Status int
	Body   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("downstream refused the request: %d %s", e.Status, e.Body)
}

// downstreamCall is one POST with an idempotency key.
type downstreamCall struct {
	URL         string
	Key         string
	ContentType string // defaults to application/json
	Header      http.Header
	Body        []byte
}

// post makes the call and classifies the result: nil for 2xx;
// *RefusedError for 409/422; a permanent error for other 4xx (our request
// is wrong, retrying will not fix it); a plain, retryable error for 5xx,
// 429, timeouts and connection failures. A retry sends the same key, so a
// request the downstream applied before its response was lost is not
// applied again.
func post(ctx context.Context, client *http.Client, c downstreamCall) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return 0, Permanent(err)
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
		return 0, fmt.Errorf("POST %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return s, nil
	case s == http.StatusConflict || s == http.StatusUnprocessableEntity:
		return s, &RefusedError{Status: s, Body: string(bytes.TrimSpace(body))}
	case s == http.StatusTooManyRequests || s >= 500:
		return s, fmt.Errorf("POST %s: %s", c.URL, resp.Status)
	default:
		return s, Permanent(fmt.Errorf("POST %s: %s %s", c.URL, resp.Status, bytes.TrimSpace(body)))
	}
}

// jobResult turns a follow-up job's error into what River should do with
// it: cancel a permanent failure, retry anything else.
func jobResult(err error) error {
	if err != nil && (IsPermanent(err) || errors.As(err, new(*RefusedError))) {
		return river.JobCancel(err)
	}
	return err
}

// defaultClient is used when a handler's config names no HTTP client.
func defaultClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: DefaultDownstreamTimeout}
}
