package destination

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

// loadedSend is a claimed send and its delivery's body.
type loadedSend struct {
	ID                                         int64
	Source, DeliveryID, EventType, Key, holder string
	slot                                       int32 // its claim's slot of max_in_flight
	Ordered, SkipStale                         bool
	ResourceKey                                *string
	Resource                                   handlers.Resource
	Attempts                                   int
	CreatedAt                                  time.Time
	Payload                                    []byte // nil: the inbox row is gone
	ContentType                                *string
	TraceParent                                *string     // the enqueueing processing's; nil: untraced
	Header                                     http.Header // the delivery's stored headers
	ReceivedAt                                 *time.Time
	stale, probe                               bool
	startAt                                    time.Time // its rate slot
}

// response is what one request got.
type response struct {
	at         time.Time
	took       time.Duration
	status     int // 0: no answer
	err        error
	body       string
	retryAfter time.Duration
	location   string // a 3xx's Location
	stale      bool
	probe      bool
	published  bool // a broker has the message (body says where)
}

func (r response) ok() bool {
	return r.err == nil && (r.published || r.status >= 200 && r.status < 300)
}

// maxResponseExcerpt bounds what an attempt keeps of the answer.
const maxResponseExcerpt = 512

// post makes the request: the delivery's body byte for byte, with its
// Content-Type, the key as webhook-id and Idempotency-Key, and a Standard
// Webhooks signature when the destination has a secret.
func (s *Service) post(ctx context.Context, d *dest, send *loadedSend) response {
	ctx, span := startAttemptSpan(ctx, d, send)
	res := s.attempt(ctx, d, send)
	endAttemptSpan(span, res)
	return res
}

// attempt makes one request, or one publish to a broker.
func (s *Service) attempt(ctx context.Context, d *dest, send *loadedSend) response {
	contentType := "application/json"
	if send.ContentType != nil && *send.ContentType != "" {
		contentType = *send.ContentType
	}
	if d.Kafka != nil || d.NATS != nil {
		return s.publish(ctx, d, send, contentType)
	}
	stale := send.stale
	res := response{at: time.Now(), stale: stale, probe: send.probe}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(send.Payload))
	if err != nil {
		res.err = outbound.MaskError(err) // names the URL
		return res
	}
	for k, v := range d.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "hookinbox")
	req.Header.Set("Webhook-Id", send.Key)
	req.Header.Set("Idempotency-Key", send.Key)
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(res.at.Unix(), 10))
	if d.signer != nil {
		sig, err := d.signer.Sign(send.Key, res.at, send.Payload)
		if err != nil {
			res.err = fmt.Errorf("sign: %w", err)
			return res
		}
		req.Header.Set("Webhook-Signature", sig)
	}
	req.Header.Set("Hookinbox-Source", send.Source)
	req.Header.Set("Hookinbox-Event", send.EventType)
	req.Header.Set("Hookinbox-Delivery-Id", send.DeliveryID)
	injectTraceparent(ctx, req.Header)
	if stale {
		req.Header.Set("Hookinbox-Stale", "true")
	}

	resp, err := d.client.Do(req)
	res.took = time.Since(res.at)
	if err != nil {
		res.err = outbound.MaskError(err) // a URL's query may hold an api_key
		return res
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	res.status = resp.StatusCode
	if utf8.Valid(excerpt) {
		res.body = string(bytes.TrimSpace(excerpt))
	}
	if outbound.IsRedirect(res.status) {
		res.location = resp.Header.Get("Location")
	}
	if res.status == http.StatusTooManyRequests || res.status == http.StatusServiceUnavailable {
		res.retryAfter = retryAfter(resp.Header.Get("Retry-After"), res.at)
	}
	return res
}

// retryAfter reads Retry-After: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// jitter returns d ± 20%, spreading retries of many sends.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// describe is an attempt's error for operators: the transport error, or
// the status and the answer's first bytes.
func (r response) describe() string {
	if r.err != nil {
		return r.err.Error()
	}
	if r.ok() {
		return ""
	}
	if outbound.IsRedirect(r.status) {
		return outbound.RedirectError(r.status, r.location)
	}
	msg := fmt.Sprintf("HTTP %d", r.status)
	if r.body != "" {
		msg += ": " + r.body
	}
	return msg
}
