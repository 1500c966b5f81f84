// Package downstreamstub is a stand-in downstream API for tests, drills
// and `hookinbox stub-downstream`: a real HTTP server that, like Stripe,
// applies a request's effect once per Idempotency-Key. It records every
// request, so a test can tell "retried with the same key" (one effect)
// from "retried with a new key" (a double effect).
//
// Like a real API, it answers a request whose key is still being processed
// by an earlier request with 409 and Retry-After, without applying
// anything. Processing is instant unless SetProcessingDelay makes a path
// slow, which is when a client's retry can overtake its first request.
package downstreamstub

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Action is what the server does with one request.
type Action int

const (
	// Apply applies the effect (once per key) and answers 200.
	Apply Action = iota
	// Fail answers 500 without applying anything.
	Fail
	// Refuse answers 422 without applying anything: a final "no".
	Refuse
	// ApplyThenStall applies the effect, then holds the response longer
	// than any sane client timeout: the response is lost.
	ApplyThenStall
	// ApplyThenHangUp applies the effect, then closes the connection
	// without answering.
	ApplyThenHangUp
	// Gone answers 410 without applying anything: a final "no" of a
	// downstream that says it otherwise than 422.
	Gone
)

func (a Action) String() string {
	return [...]string{"apply", "fail", "refuse", "apply_then_stall", "apply_then_hang_up", "gone"}[a]
}

// inProgress is the action logged for a request answered 409 because its
// key's first request is still being processed.
const inProgress = "in_progress"

// Request is one recorded request.
type Request struct {
	Path   string
	Key    string
	Header http.Header
	Body   []byte
}

// Server is the stub.
type Server struct {
	URL string

	srv    *http.Server
	logger *slog.Logger

	mu       sync.Mutex
	script   map[string][]Action // per path: actions for the 1st, 2nd, ... request
	fallback map[string]Action   // per path: action after the script; Apply if unset
	seen     map[string]int      // per path: requests so far
	requests []Request
	effects  map[string]int           // per path+key: effects applied (must stay ≤ 1)
	delay    map[string]time.Duration // per path: how long Apply takes
	busy     map[string]time.Time     // per path+key: when its processing request finishes
	release  chan struct{}
}

// New starts a server on a free loopback port, closed when t ends.
func New(t testing.TB) *Server {
	s, err := Start("127.0.0.1:0", nil)
	if err != nil {
		t.Fatalf("downstreamstub: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start serves on addr until Close. Each request is logged to logger when
// it is not nil.
func Start(addr string, logger *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL: "http://" + ln.Addr().String(), logger: logger,
		script: map[string][]Action{}, fallback: map[string]Action{}, seen: map[string]int{}, effects: map[string]int{},
		delay: map[string]time.Duration{}, busy: map[string]time.Time{}, release: make(chan struct{}),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return s, nil
}

// Close stops the server, releasing stalled requests first.
func (s *Server) Close() {
	close(s.release)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}

// Script sets what the next requests to path get, in order; requests
// beyond the script get the path's fallback (Apply unless SetFallback).
// A request answered 409 because its key is in progress uses up no entry.
func (s *Server) Script(path string, actions ...Action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script[path] = actions
}

// SetFallback sets what requests to path get once its script is used up.
func (s *Server) SetFallback(path string, a Action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback[path] = a
}

// SetProcessingDelay makes an Apply to path take d before its effect is
// applied and it answers. It goes on when its client gives up waiting, as
// a real API's does; meanwhile a request with the same key gets 409.
func (s *Server) SetProcessingDelay(path string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay[path] = d
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")
	pathKey := r.URL.Path + " " + key

	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Key: key, Header: r.Header.Clone(), Body: body})
	if until, ok := s.busy[pathKey]; ok && key != "" {
		s.mu.Unlock()
		s.log(r.URL.Path, key, inProgress, false, body)
		// Retry-After is in whole seconds: round the rest of the first
		// request's processing up.
		w.Header().Set("Retry-After", strconv.Itoa(int((time.Until(until)+time.Second-1)/time.Second)))
		http.Error(w, `{"error":"a request with this key is in progress"}`, http.StatusConflict)
		return
	}
	n := s.seen[r.URL.Path]
	s.seen[r.URL.Path]++
	action := s.fallback[r.URL.Path] // Apply when unset
	if script := s.script[r.URL.Path]; n < len(script) {
		action = script[n]
	}
	delay := s.delay[r.URL.Path]
	// A key whose effect is applied is answered at once, as an API replays
	// a stored response.
	if action == Apply && delay > 0 && key != "" && s.effects[pathKey] == 0 {
		s.busy[pathKey] = time.Now().Add(delay)
		s.mu.Unlock()
		select {
		case <-s.release:
		case <-time.After(delay):
		}
		s.mu.Lock()
		delete(s.busy, pathKey)
	}
	applied := false
	switch action {
	case Apply, ApplyThenStall, ApplyThenHangUp:
		// The idempotency contract: one effect per key, whatever the retries.
		if key == "" || s.effects[pathKey] == 0 {
			s.effects[pathKey]++
			applied = true
		}
	}
	s.mu.Unlock()
	s.log(r.URL.Path, key, action.String(), applied, body)

	switch action {
	case Fail:
		http.Error(w, `{"error":"temporarily unavailable"}`, http.StatusInternalServerError)
	case Refuse:
		http.Error(w, `{"error":"cannot fulfil"}`, http.StatusUnprocessableEntity)
	case Gone:
		http.Error(w, `{"error":"gone"}`, http.StatusGone)
	case ApplyThenStall:
		select {
		case <-s.release:
		case <-time.After(30 * time.Second):
		}
	case ApplyThenHangUp:
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
}

func (s *Server) log(path, key, action string, applied bool, body []byte) {
	if s.logger != nil {
		s.logger.Info("downstream request", "path", path, "idempotency_key", key,
			"action", action, "effect_applied", applied, "body", string(body))
	}
}

// Requests returns the requests made to path, in order.
func (s *Server) Requests(path string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// Effects returns, for path, the number of effects applied per key. A
// caller that keeps its key across retries has one entry with value 1.
func (s *Server) Effects(path string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, n := range s.effects {
		if len(k) > len(path) && k[:len(path)+1] == path+" " {
			out[k[len(path)+1:]] = n
		}
	}
	return out
}
