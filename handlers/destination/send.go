package destination

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
)

var (
	//go:embed sql/send_load.sql
	sendLoadSQL string
	//go:embed sql/resource_sent_get.sql
	resourceSentGetSQL string
)

// SendArgs asks for one send's request. The send row, not the job, is the
// unit of "once": its key is the same on every run of the job.
type SendArgs struct {
	SendID      int64  `json:"send_id"`
	Destination string `json:"destination"`
}

func (SendArgs) Kind() string { return "destination_send" }

// QueueFor is the River queue of a destination's sends: one queue per
// destination, so a slow one never holds up the others' workers.
func QueueFor(name string) string {
	q := "dest_" + name
	if len(q) <= 64 && queueNameRE.MatchString(q) {
		return q
	}
	sum := sha256.Sum256([]byte(name))
	return "dest_" + hex.EncodeToString(sum[:8]) // a name River's queue rules refuse
}

// River's rule for queue names.
var queueNameRE = regexp.MustCompile(`^(?:[a-z0-9])+(?:[_|\-]?[a-z0-9]+)*$`)

type sendWorker struct {
	river.WorkerDefaults[SendArgs]
	svc *Service
}

// Timeout leaves room for the request and the waits before it (a slot,
// the rate limiter).
func (w *sendWorker) Timeout(job *river.Job[SendArgs]) time.Duration {
	if d, ok := w.svc.dests[job.Args.Destination]; ok {
		return JobTimeout(d.Timeout)
	}
	return time.Minute
}

// JobTimeout is how long a send's job may run with a request timeout of
// requestTimeout: River must not take it for stuck (jobs.rescue_stuck_after)
// sooner, or the send would be made twice at once.
func JobTimeout(requestTimeout time.Duration) time.Duration {
	return requestTimeout + maxLeaseWait + maxRateLead + 10*time.Second
}

// loadedSend is a send and its delivery's body.
type loadedSend struct {
	ID                                        int64
	State, Source, DeliveryID, EventType, Key string
	Ordered, SkipStale                        bool
	ResourceKey                               *string
	Resource                                  handlers.Resource
	Attempts                                  int
	CreatedAt                                 time.Time
	Payload                                   []byte
	ContentType                               *string
}

func (l *loadedSend) chain(destination string) chainKey {
	return chainKey{destination, l.Source, *l.ResourceKey}
}

// busyRetry is how long a send snoozes when every slot stayed taken.
const busyRetry = 500 * time.Millisecond

func (w *sendWorker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	s := w.svc
	d, ok := s.dests[job.Args.Destination]
	if !ok {
		return s.abandon(ctx, job, fmt.Errorf("destination %q is no longer configured", job.Args.Destination))
	}
	if err := s.ensureShared(ctx, d); err != nil {
		return err
	}
	send, err := s.load(ctx, job.Args.SendID)
	if errors.Is(err, pgx.ErrNoRows) {
		return river.JobCancel(fmt.Errorf("send %d or its inbox row is gone", job.Args.SendID))
	}
	if err != nil {
		return err
	}
	if send.State != "pending" {
		return nil // decided by an earlier run whose commit River did not record
	}

	st, err := s.state(ctx, d.Name)
	if err != nil {
		return err
	}
	if st.paused {
		held, err := s.hold(ctx, job, d, send)
		if err != nil || held {
			return err
		}
	}
	stale := false
	if send.Ordered {
		if stale, err = s.isStale(ctx, d.Name, send); err != nil {
			return err
		}
		if stale && send.SkipStale {
			return s.finish(ctx, job, d, send, outcome{state: "skipped", stale: true})
		}
	}
	lease, err := s.acquire(ctx, d)
	if err != nil {
		return err
	}
	if lease == nil {
		return river.JobSnooze(jitter(busyRetry))
	}
	probe := false
	if st.open {
		if probe, err = s.claimProbe(ctx, d); err != nil || !probe {
			s.release(ctx, d, lease)
			if err != nil {
				return err
			}
			return river.JobSnooze(time.Until(st.nextProbe) + jitter(d.Circuit.ProbeEvery/2))
		}
	}
	wait, ok, err := s.reserveRate(ctx, d)
	if err != nil || !ok {
		s.release(ctx, d, lease)
		if err != nil {
			return err
		}
		return river.JobSnooze(wait + jitter(100*time.Millisecond))
	}
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			s.release(ctx, d, lease)
			return ctx.Err()
		}
	}
	res := s.post(ctx, d, send, stale)
	res.probe, res.lease = probe, lease
	return s.record(ctx, job, d, send, res)
}

// response is what one request got.
type response struct {
	at         time.Time
	took       time.Duration
	status     int // 0: no answer
	err        error
	body       string
	retryAfter time.Duration
	stale      bool
	probe      bool
	lease      *lease
}

func (r response) ok() bool { return r.err == nil && r.status >= 200 && r.status < 300 }

// maxResponseExcerpt bounds what an attempt keeps of the answer.
const maxResponseExcerpt = 512

// post makes the request: the delivery's body byte for byte, with its
// Content-Type, the key as webhook-id and Idempotency-Key, and a Standard
// Webhooks signature when the destination has a secret.
func (s *Service) post(ctx context.Context, d *dest, send *loadedSend, stale bool) response {
	res := response{at: time.Now(), stale: stale}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(send.Payload))
	if err != nil {
		res.err = err
		return res
	}
	for k, v := range d.Header {
		req.Header[k] = v
	}
	contentType := "application/json"
	if send.ContentType != nil && *send.ContentType != "" {
		contentType = *send.ContentType
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
	if stale {
		req.Header.Set("Hookinbox-Stale", "true")
	}

	resp, err := d.client.Do(req)
	res.took = time.Since(res.at)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	res.status = resp.StatusCode
	if utf8.Valid(excerpt) {
		res.body = string(bytes.TrimSpace(excerpt))
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
	msg := fmt.Sprintf("HTTP %d", r.status)
	if r.body != "" {
		msg += ": " + r.body
	}
	return msg
}

func (s *Service) load(ctx context.Context, id int64) (*loadedSend, error) {
	l := &loadedSend{ID: id}
	var eventAt, receivedAt time.Time
	err := s.cfg.Pool.QueryRow(ctx, sendLoadSQL, pgx.NamedArgs{"id": id}).Scan(
		&l.State, &l.Source, &l.DeliveryID, &l.EventType, &l.Key, &l.Ordered, &l.SkipStale, &l.ResourceKey,
		&eventAt, &receivedAt, &l.Resource.AtIsReceipt, &l.Attempts, &l.CreatedAt, &l.Payload, &l.ContentType)
	if err != nil {
		return nil, err
	}
	l.Resource.At, l.Resource.ReceivedAt = eventAt, receivedAt
	if l.ResourceKey != nil {
		l.Resource.Key = *l.ResourceKey
	}
	l.Ordered = l.Ordered && l.ResourceKey != nil
	return l, nil
}

// isStale reports whether the destination already got a newer event of
// the send's resource.
func (s *Service) isStale(ctx context.Context, destination string, send *loadedSend) (bool, error) {
	var v handlers.Version
	err := s.cfg.Pool.QueryRow(ctx, resourceSentGetSQL, send.chain(destination).args()).Scan(&v.At, &v.ReceivedAt, &v.ReceiptAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read what the destination got: %w", err)
	}
	return send.Resource.OlderThan(v), nil
}
