// Package downstreamstub is a stand-in downstream API for tests, drills
// and `hookinbox stub-downstream`: a real HTTP server that, like Stripe,
// applies a request's effect once per Idempotency-Key. It records every
// request, so a test can tell "retried with the same key" (one effect)
// from "retried with a new key" (a double effect).
package downstreamstub

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	// Refuse answers 409 without applying anything: a final "no".
	Refuse
	// ApplyThenStall applies the effect, then holds the response longer
	// than any sane client timeout: the response is lost.
	ApplyThenStall
	// ApplyThenHangUp applies the effect, then closes the connection
	// without answering.
	ApplyThenHangUp
)

func (a Action) String() string {
	return [...]string{"apply", "fail", "refuse", "apply_then_stall", "apply_then_hang_up"}[a]
}

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
	effects  map[string]int // per path+key: effects applied (must stay ≤ 1)
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
		script: map[string][]Action{}, fallback: map[string]Action{}, seen: map[string]int{}, effects: map[string]int{}, release: make(chan struct{}),
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

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")

	s.mu.Lock()
	n := s.seen[r.URL.Path]
	s.seen[r.URL.Path]++
	action := s.fallback[r.URL.Path] // Apply when unset
	if script := s.script[r.URL.Path]; n < len(script) {
		action = script[n]
	}
	s.requests = append(s.requests, Request{Path: r.URL.Path, Key: key, Header: r.Header.Clone(), Body: body})
	applied := false
	switch action {
	case Apply, ApplyThenStall, ApplyThenHangUp:
		// The idempotency contract: one effect per key, whatever the retries.
		if key == "" || s.effects[r.URL.Path+" "+key] == 0 {
			s.effects[r.URL.Path+" "+key]++
			applied = true
		}
	}
	s.mu.Unlock()
	if s.logger != nil {
		s.logger.Info("downstream request", "path", r.URL.Path, "idempotency_key", key,
			"action", action.String(), "effect_applied", applied, "body", string(body))
	}

	switch action {
	case Fail:
		http.Error(w, `{"error":"temporarily unavailable"}`, http.StatusInternalServerError)
	case Refuse:
		http.Error(w, `{"error":"cannot fulfil"}`, http.StatusConflict)
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
