// Package destination delivers stored deliveries to the user's own HTTP
// services: signed as Standard Webhooks, retried on a schedule, limited
// in rate and concurrency across replicas, behind a circuit breaker, and,
// for ordered routes, one resource at a time in the order the deliveries
// were processed.
//
// The outbox: when a delivery is processed, the destinations its routes
// name each get one send row, inserted in the delivery's processing
// transaction. The row is unique per (delivery, destination), so a
// replay, a retry or a crash never makes a second, distinct request. Every
// request for a send carries the same key as webhook-id and
// Idempotency-Key, derived from the delivery and the destination, so a
// receiver dedupes a request whose answer was lost.
//
// The requests: every worker process runs a sender per destination
// (Service.Start). A sender claims the due sends it may make in one
// statement, within max_in_flight and rate_limit counted across replicas
// from the claims themselves, makes the requests concurrently, and records
// their outcomes in one transaction. A claim expires on its own, so the
// sends of a sender that died are made again, with the same key.
package destination

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

var (
	//go:embed sql/send_insert.sql
	sendInsertSQL string
)

// HandlerName is the name under which destination keys are derived:
// Key = handlers.DeriveKey(source, delivery id, HandlerName, "dest:"+name).
const HandlerName = "destinations"

// Key is the webhook-id and Idempotency-Key of the send of one delivery to
// one destination: the same on every retry and replay, different for
// every other delivery or destination.
func Key(source, deliveryID, destination string) string {
	return handlers.DeriveKey(source, deliveryID, HandlerName, "dest:"+destination)
}

// Service sends deliveries to destinations.
type Service struct {
	cfg     Config
	dests   map[string]*dest
	targets targets
	logger  *slog.Logger
	run     runState
}

// dest is a configured destination with what sending to it needs.
type dest struct {
	config.Destination
	header http.Header // Headers, canonical, as each request carries them
	client *http.Client
	signer *standardwebhooks.Webhook // nil: unsigned
	broker brokerFor                 // a Kafka or NATS destination's connection
	// exprs: a route to it has a filter or a transform, which reads the
	// delivery's headers and receipt at send time.
	exprs  bool
	ready  onceOK                 // its shared rows exist
	sender atomic.Pointer[sender] // this process's sender while Start runs it (hints read it from any goroutine)
}

// target is one destination a route sends a source's events to.
type target struct {
	route       config.Route
	index       int        // the route's place in the configuration
	expr        *routeExpr // its filter and transform; nil: none
	destination string
}

// Register validates cfg, registers the outbox handler of every source
// that routes name, and returns the service that sends (Start) and that
// the admin API and metrics ask about destinations.
func Register(r *handlers.Registry, cfg Config) (*Service, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string, time.Duration) {}
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.SeenEvery == 0 {
		cfg.SeenEvery = DefaultSeenEvery
	}
	s := &Service{cfg: cfg, dests: map[string]*dest{}, logger: cfg.Logger}
	for _, d := range cfg.Destinations {
		d = withDefaults(d)
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = max(d.MaxInFlight, 2) // reuse a connection per request in flight
		// Headers and a body of up to 32 KB leave in one write: with
		// the default 4 KB, a 2–8 KB delivery took two or three, the
		// largest share of a backlog drain's CPU in serve
		// (bench/README.md, Design decisions, "Sender cycles").
		transport.WriteBufferSize = 32 << 10
		if d.TLS.CAFile != "" {
			roots, err := loadCAFile(d.TLS.CAFile)
			if err != nil {
				return nil, fmt.Errorf("destination %s: %w", d.Name, err)
			}
			transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		}
		// A redirect is an answer, never followed (internal/outbound): the
		// configured headers and signature go to the destination's host only.
		client := &http.Client{Timeout: d.Timeout.Std(), Transport: transport, CheckRedirect: outbound.CheckRedirect}
		nd := &dest{Destination: d, header: http.Header{}, client: client}
		for k, v := range d.Headers {
			nd.header.Set(k, v)
		}
		if d.Secret != "" {
			var err error
			if nd.signer, err = standardwebhooks.NewWebhook(d.Secret); err != nil {
				return nil, fmt.Errorf("destination %s: secret: %w", d.Name, err)
			}
		}
		s.dests[d.Name] = nd
	}
	var err error
	if s.targets, err = newTargets(cfg.Routes, cfg.Sources); err != nil {
		return nil, err
	}
	for _, ts := range s.targets {
		for _, t := range ts {
			if d, ok := s.dests[t.destination]; ok && t.expr != nil {
				d.exprs = true
			}
		}
	}
	for _, src := range cfg.Sources {
		ts := s.targets[src]
		if len(ts) == 0 {
			continue
		}
		var events []string
		for _, t := range ts {
			events = append(events, t.route.Events...)
		}
		if err := r.Register(s.outbox(src, events)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// outbox is the handler of a routed source's events: enqueue, in the
// delivery's processing transaction.
func (s *Service) outbox(src string, events []string) handlers.Registration {
	return handlers.Registration{
		Name:     HandlerName + "." + src,
		Source:   src,
		Events:   events,
		Batch:    true,                // database work only: the senders make the requests
		Ordering: handlers.EveryEvent, // a destination is told an event is stale, or skips it
		// The outbox reads the payload, headers and resource, never
		// go-github's typed event: without the parse, a forwarded
		// GitHub delivery costs serve less CPU (bench/README.md,
		// The whole path).
		PayloadOnly: true,
		Handler:     handlers.HandlerFunc(s.enqueue),
	}
}

// Names lists the configured destinations.
func (s *Service) Names() []string {
	names := make([]string, 0, len(s.cfg.Destinations))
	for _, d := range s.cfg.Destinations {
		names = append(names, d.Name)
	}
	return names
}

// destinationsFor returns the destinations a source's event type is
// routed to, each once, in configuration order.
func (ts targets) destinationsFor(source, eventType string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range ts[source] {
		if !seen[t.destination] && t.matches(eventType) {
			out = append(out, t.destination)
			seen[t.destination] = true
		}
	}
	return out
}

func (t target) matches(eventType string) bool {
	for _, p := range t.route.Events {
		if handlers.MatchEvent(p, eventType) {
			return true
		}
	}
	return false
}

// routeFor returns the route that sends a delivery to destination: the
// first, in configuration order, whose events match and whose filter
// yields true. ok is false when none does. A filter that fails to
// evaluate decides, with its error: the send is recorded failed, never
// taken for filtered out.
func (ts targets) routeFor(destination string, in *ExprInput) (t target, ok bool, err error) {
	for _, t := range ts[in.Source] {
		if t.destination != destination || !t.matches(in.EventType) {
			continue
		}
		match, err := t.expr.match(in)
		if err != nil {
			return t, true, fmt.Errorf("routes[%d] (%s): %w", t.index, t.route.Source, err)
		}
		if match {
			return t, true, nil
		}
	}
	return target{}, false, nil
}

// exprInputOf is what route expressions see of a delivery being processed.
func exprInputOf(e *handlers.Event) ExprInput {
	return ExprInput{Source: e.Source, EventType: e.EventType, DeliveryID: e.DeliveryID, ReceivedAt: e.ReceivedAt,
		Resource: e.Resource.Key, Header: e.Headers, Body: e.Payload, ContentType: e.Headers.Get("Content-Type")}
}

// enqueue is the outbox: in the delivery's processing transaction, one
// send per routed destination, unless the delivery already has it (a
// replay, a retried processing). A route's filter decides whether it
// sends; one that fails records the send failed with its error. This
// process's sender is told to look soon: the send is due once the
// transaction commits.
func (s *Service) enqueue(ctx context.Context, e *handlers.Event) error {
	in := exprInputOf(e)
	for _, name := range s.targets.destinationsFor(e.Source, e.EventType) {
		t, ok, evalErr := s.targets.routeFor(name, &in)
		if !ok {
			continue // filtered out: nothing is recorded
		}
		if err := s.insertSend(ctx, e, t, evalErr); err != nil {
			return err
		}
	}
	return nil
}

// insertSend records one send of e through t, failed with evalErr if its
// filter could not be evaluated.
func (s *Service) insertSend(ctx context.Context, e *handlers.Event, t target, evalErr error) error {
	ordered := t.route.Ordered && e.Resource.Key != "" && evalErr == nil
	// The resource is kept for every send (a Kafka destination keys by
	// it, a route's expressions read it); only an ordered one waits on it.
	var resourceKey, lastError *string
	if e.Resource.Key != "" {
		resourceKey = &e.Resource.Key
	}
	state := initialState(ordered)
	if evalErr != nil {
		state, lastError = "failed", ptr(evalErr.Error())
	}
	row := sendRow{
		destination: t.destination, source: e.Source, deliveryID: e.DeliveryID, inboxID: e.InboxID,
		eventType: e.EventType, key: Key(e.Source, e.DeliveryID, t.destination), ordered: ordered,
		skipStale: ordered && t.route.SkipStale, resourceKey: resourceKey,
		eventAt: e.Resource.At, eventReceivedAt: e.Resource.ReceivedAt,
		atIsReceipt: e.Resource.AtIsReceipt, state: state, lastError: lastError, traceParent: traceParentOf(ctx),
	}
	if evalErr == nil {
		// Nothing here depends on whether the row is new, so the
		// insert is written with the processing batch's closing
		// statements, every send of the batch in one statement,
		// instead of a round trip of its own (bench/README.md, Design
		// decisions, "Send insert with the delivery" and "Send rows
		// per batch"). An ordered send's turn is the sender's to give
		// (queueLineUp).
		e.DeferRow(sendRows{}, row)
		s.hint(t.destination)
		return nil
	}
	// A failed route is counted and logged once, for a new send only.
	var id int64
	err := e.Tx.QueryRow(ctx, sendInsertSQL, sendInsertArgs(row)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // recorded already: the same key, nothing new
	}
	if err != nil {
		return fmt.Errorf("destination %s: record send: %w", t.destination, err)
	}
	s.cfg.Observe(t.destination, outcomeRouteFailed, 0)
	e.Logger.Warn("destination: route failed to evaluate; send recorded failed", "destination", t.destination, "error", evalErr)
	return nil
}

func ptr[T any](v T) *T { return &v }

// initialState is a new send's: an ordered one waits for the sender to put
// it in its resource's line (queueLineUp), any other is due at once.
func initialState(ordered bool) string {
	if ordered {
		return "waiting"
	}
	return "pending"
}
