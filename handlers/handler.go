// Package handlers runs per-event business logic for stored deliveries.
//
// A handler is registered for a source (or every source of a provider) and
// a set of event types. It receives an Event: the delivery, a transaction
// its database writes belong to, ordering facts about the resource the
// event concerns, and Key(step), a downstream idempotency key derived from
// the delivery. The handler's writes, the delivery's outcome (processed)
// and the River job's completion commit together; a crash before that
// commit leaves nothing behind, and the retry starts clean.
//
// Calls to other systems are never made inside that transaction. A handler
// enqueues a follow-up River job in it instead (EnqueueOnce, the
// transactional outbox), and that job makes the call with the derived key.
//
// The handlers hookinbox ships are built on this package's API alone:
// handlers/github (the issue mirror), handlers/stripe (the ledger and a
// payment saga with its compensation) and internal/destination
// (forwarding to configured destinations).
package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Handler handles one delivery. It must be idempotent: it runs again on
// River's retries, on replays and on a re-run after a crash, and its
// effects must not double. Upserts, natural-key inserts with ON CONFLICT,
// and EnqueueOnce make that easy.
type Handler interface {
	Handle(ctx context.Context, e *Event) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, e *Event) error

func (f HandlerFunc) Handle(ctx context.Context, e *Event) error { return f(ctx, e) }

// Ordering says what a handler wants to see when events arrive out of order.
type Ordering int

const (
	// LatestState handlers mirror the newest state of a resource: a stale
	// event (older than one already applied to its resource) is not passed
	// to them at all.
	LatestState Ordering = iota
	// EveryEvent handlers see every event, stale or not; Event.Stale tells.
	EveryEvent
)

// AnyEvent matches every event type in Registration.Events.
const AnyEvent = "*"

// Registration binds a handler to the deliveries it handles.
type Registration struct {
	// Name identifies the handler. It is part of every key the handler
	// derives, so renaming a handler changes its downstream keys: pick a
	// stable name. Required, unique.
	Name string

	// Source matches deliveries of one configured source by name. Provider
	// matches every source of a provider (github, stripe, standard).
	// Exactly one of the two is required.
	Source   string
	Provider string

	// Events are the event types handled ("issues", "payment_intent.succeeded"),
	// or patterns: "invoice.*" matches "invoice" and every "invoice.<…>",
	// and AnyEvent matches all (see MatchEvent). Required.
	Events []string

	// Ordering defaults to LatestState.
	Ordering Ordering

	// Batch lets the handler's deliveries share a processing transaction
	// with other deliveries (up to jobs.batch_size), which makes
	// processing several times cheaper. A batch runs its deliveries
	// one after another, so set it only for handlers that work in the
	// database and return quickly: one that calls out or waits would hold
	// up every delivery batched with it. Each delivery still keeps its own
	// outcome: a handler error rolls back only that delivery's effects.
	// Defaults to false: the delivery gets a transaction of its own.
	Batch bool

	// PayloadOnly says the handler never reads Event.GitHub, so a GitHub
	// delivery matched only by such handlers is not parsed into
	// go-github's typed event: a full parse of the payload, a large share
	// of a default serve's CPU under steady GitHub load (bench/README.md,
	// Design decisions, "Payloads and JSON"). Event.GitHub is then nil;
	// Payload is always there. Defaults to false: Event.GitHub is set.
	PayloadOnly bool

	Handler Handler
}

func (r Registration) validate() error {
	switch {
	case r.Name == "":
		return errors.New("handlers: Registration.Name is required")
	case (r.Source == "") == (r.Provider == ""):
		return fmt.Errorf("handlers: %s: set exactly one of Source and Provider", r.Name)
	case len(r.Events) == 0:
		return fmt.Errorf("handlers: %s: Events is empty (use AnyEvent for all)", r.Name)
	case r.Handler == nil:
		return fmt.Errorf("handlers: %s: Handler is nil", r.Name)
	}
	return nil
}

// wantGitHubEvent reports whether any of matched reads Event.GitHub.
func wantGitHubEvent(matched []Registration) bool {
	for _, reg := range matched {
		if !reg.PayloadOnly {
			return true
		}
	}
	return false
}

func (r Registration) matches(source, provider, eventType string) bool {
	if r.Source != "" && r.Source != source || r.Provider != "" && r.Provider != provider {
		return false
	}
	for _, pattern := range r.Events {
		if MatchEvent(pattern, eventType) {
			return true
		}
	}
	return false
}

// MatchEvent reports whether eventType matches pattern: AnyEvent ("*")
// matches every type, "x.*" matches "x" and every "x.<anything>" (Stripe's
// "invoice.paid" under "invoice.*"; GitHub's "check_run", whose action is
// in the body, under "check_run.*"), and anything else matches itself.
func MatchEvent(pattern, eventType string) bool {
	if pattern == AnyEvent || pattern == eventType {
		return true
	}
	prefix, ok := strings.CutSuffix(pattern, ".*")
	return ok && (eventType == prefix || strings.HasPrefix(eventType, prefix+"."))
}

// PermanentError marks a failure that retrying cannot fix (a downstream
// 4xx, a payload the handler cannot use). The delivery is marked failed at
// once instead of being retried.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so that it is not retried.
func Permanent(err error) error { return &PermanentError{Err: err} }

// IsPermanent reports whether err, or an error it wraps, is permanent.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}
