// Package receiver is a user's webhook endpoint as destination tests and
// drills need it: a real HTTP server that verifies each request's Standard
// Webhooks signature with the standard library for it, applies each
// webhook-id's effect once (the dedupe every receiver should do), and
// records what it saw: requests, the most in flight at once, requests per
// second. Scripts make it fail the ways real services do.
package receiver

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Action is what the receiver does with one request.
type Action struct {
	// Status answers with this status without applying the effect (0:
	// apply and answer 200).
	Status int
	// RetryAfter is sent with Status when set.
	RetryAfter string
	// Delay holds the request this long before acting.
	Delay time.Duration
	// Until, when not nil, holds the request until it is closed (or
	// Delay passes, when set): a test decides when the answer comes.
	Until <-chan struct{}
	// LoseResponse applies the effect, then closes the connection without
	// answering: the sender never learns it was applied.
	LoseResponse bool
}

// Common actions.
var (
	Apply = Action{}
	Fail  = Action{Status: http.StatusInternalServerError}
)

// Request is one request the receiver saw.
type Request struct {
	At        time.Time
	Header    http.Header
	Body      []byte
	WebhookID string
	Verified  bool // the signature checked out (false when no secret is set)
}

// Receiver is the server.
type Receiver struct {
	URL string

	srv    *http.Server
	signer *standardwebhooks.Webhook

	mu          sync.Mutex
	script      []Action
	fallback    Action
	n           int
	requests    []Request
	effects     map[string]int // per webhook-id: effects applied (≤ 1)
	order       []string       // webhook-ids in the order their effects were applied
	inFlight    int
	maxInFlight int
	release     chan struct{}

	onBadSignature func(webhookID string)
}

// New starts a receiver on a free loopback port, closed when t ends. With
// a secret ("whsec_…"), a request whose signature does not verify gets 401
// and fails the test.
func New(t testing.TB, secret string) *Receiver {
	t.Helper()
	r, err := start("127.0.0.1:0", secret, func(id string) { t.Errorf("receiver: request %s had a bad signature", id) })
	if err != nil {
		t.Fatalf("receiver: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

// Start serves on addr until Close.
func Start(addr, secret string) (*Receiver, error) { return start(addr, secret, nil) }

func start(addr, secret string, onBadSignature func(string)) (*Receiver, error) {
	r := &Receiver{effects: map[string]int{}, release: make(chan struct{}), onBadSignature: onBadSignature}
	if secret != "" {
		var err error
		if r.signer, err = standardwebhooks.NewWebhook(secret); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r.URL = "http://" + ln.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln) //nolint:errcheck // ends with Close
	return r, nil
}

// Close stops the server, releasing held requests first.
func (r *Receiver) Close() {
	close(r.release)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// Script sets what the next requests get, in order; later ones get the
// fallback (Apply unless SetFallback).
func (r *Receiver) Script(actions ...Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script, r.n = actions, 0
}

// SetFallback sets what requests get once the script is used up.
func (r *Receiver) SetFallback(a Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fallback = a
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	id := req.Header.Get("Webhook-Id")
	verified := false
	if r.signer != nil {
		if err := r.signer.Verify(body, req.Header); err != nil {
			if r.onBadSignature != nil {
				r.onBadSignature(id)
			}
			http.Error(w, "bad signature: "+err.Error(), http.StatusUnauthorized)
			return
		}
		verified = true
	}

	r.mu.Lock()
	action := r.fallback
	if r.n < len(r.script) {
		action = r.script[r.n]
	}
	r.n++
	r.requests = append(r.requests, Request{At: time.Now(), Header: req.Header.Clone(), Body: body, WebhookID: id, Verified: verified})
	r.inFlight++
	r.maxInFlight = max(r.maxInFlight, r.inFlight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()

	if action.Delay > 0 || action.Until != nil {
		var delay <-chan time.Time // nil, never ready: no Delay
		if action.Delay > 0 {
			delay = time.After(action.Delay)
		}
		select {
		case <-delay:
		case <-action.Until:
		case <-r.release:
		case <-req.Context().Done():
			return
		}
	}
	if action.Status != 0 {
		if action.RetryAfter != "" {
			w.Header().Set("Retry-After", action.RetryAfter)
		}
		http.Error(w, `{"error":"scripted `+strconv.Itoa(action.Status)+`"}`, action.Status)
		return
	}
	r.mu.Lock()
	if r.effects[id] == 0 {
		r.order = append(r.order, id)
	}
	r.effects[id]++
	if r.effects[id] > 1 {
		r.effects[id] = 1 // deduped on webhook-id: the effect happened once
	}
	r.mu.Unlock()
	if action.LoseResponse {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}`))
}

// Requests returns every request, in arrival order.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Effects returns the webhook-ids whose effect was applied (once each).
func (r *Receiver) Effects() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.effects))
	for k, v := range r.effects {
		out[k] = v
	}
	return out
}

// Applied returns the webhook-ids in the order their effects were applied.
func (r *Receiver) Applied() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.order...)
}

// MaxInFlight is the most requests the receiver held at once.
func (r *Receiver) MaxInFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxInFlight
}

// MaxPerWindow is the most requests that arrived within any window of
// length w.
func (r *Receiver) MaxPerWindow(w time.Duration) int {
	reqs := r.Requests()
	best, j := 0, 0
	for i := range reqs {
		for reqs[i].At.Sub(reqs[j].At) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}
