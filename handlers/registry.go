package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookinbox/hookinbox/internal/telemetry"

	"github.com/riverqueue/river"
)

// Outcome is what processing made of a delivery; it becomes the
// delivery's status (its inbox_outcome row, shown by the view delivery).
type Outcome string

const (
	// OutcomeProcessed: at least one handler matched and all succeeded (a
	// LatestState handler passing over a stale event counts as success).
	OutcomeProcessed Outcome = "processed"
	// OutcomeSkipped: no handler is registered for the event.
	OutcomeSkipped Outcome = "skipped"
)

// Result is what Process did with a delivery.
type Result struct {
	Outcome  Outcome
	Resource Resource // what the delivery is about; Key empty if nothing nameable
	// Stale is true when a newer event of Resource had been applied: the
	// handlers saw the delivery as stale. False when Resource.Key is empty.
	Stale bool
}

// Source is what the registry knows of a configured source.
type Source struct {
	Name     string
	Provider string
	// ResourceField is the dotted JSON path of a standard source's resource
	// id. Defaults to DefaultResourceField.
	ResourceField string
}

// Config configures a Registry.
type Config struct {
	// Sources are the configured sources; a delivery from an unknown source
	// is processed with no provider-specific ordering.
	Sources []Source
	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

// Registry holds the registered handlers and the follow-up workers they
// need, and processes deliveries with them.
type Registry struct {
	sources  map[string]Source
	regs     []Registration
	workers  []func(*river.Workers) error
	periodic []*river.PeriodicJob
	queues   map[string]int // extra River queues and their workers per process
	logger   *slog.Logger
}

func NewRegistry(cfg Config) *Registry {
	r := &Registry{sources: map[string]Source{}, logger: cfg.Logger}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	for _, s := range cfg.Sources {
		r.sources[s.Name] = s
	}
	return r
}

// Register adds a handler. Names must be unique: they are part of the keys.
func (r *Registry) Register(reg Registration) error {
	if err := reg.validate(); err != nil {
		return err
	}
	for _, existing := range r.regs {
		if existing.Name == reg.Name {
			return fmt.Errorf("handlers: a handler named %q is already registered", reg.Name)
		}
	}
	r.regs = append(r.regs, reg)
	return nil
}

// AddWorker registers a follow-up job's worker, added to the River client
// that runs the handlers.
func AddWorker[T river.JobArgs](r *Registry, w river.Worker[T]) {
	r.workers = append(r.workers, func(ws *river.Workers) error { return river.AddWorkerSafely(ws, w) })
}

// AddQueue asks for a River queue of the follow-up jobs' own, worked by
// maxWorkers goroutines per process: jobs that call a slow service then
// wait in their queue without holding up the others. Like hookinbox's
// own follow-up queues, it looks for jobs besides River's insert
// notifications every jobs.ClientConfig.FollowUpFetchPollInterval (5s by
// default). A second call for a name replaces the first.
func (r *Registry) AddQueue(name string, maxWorkers int) {
	if r.queues == nil {
		r.queues = map[string]int{}
	}
	r.queues[name] = maxWorkers
}

// Queues returns the queues AddQueue asked for, with their workers.
func (r *Registry) Queues() map[string]int { return maps.Clone(r.queues) }

// AddPeriodicJob registers a periodic job a handler needs, such as a
// sweep, run by the River client that runs the handlers (River's leader
// enqueues it: once cluster-wide). Its worker is added with AddWorker.
func (r *Registry) AddPeriodicJob(j *river.PeriodicJob) { r.periodic = append(r.periodic, j) }

// PeriodicJobs lists the periodic jobs the handlers registered.
func (r *Registry) PeriodicJobs() []*river.PeriodicJob { return r.periodic }

// AddWorkersTo adds every follow-up worker to ws.
func (r *Registry) AddWorkersTo(ws *river.Workers) error {
	for _, add := range r.workers {
		if err := add(ws); err != nil {
			return err
		}
	}
	return nil
}

// Names lists the registered handlers, for startup logs.
func (r *Registry) Names() []string {
	names := make([]string, len(r.regs))
	for i, reg := range r.regs {
		names[i] = reg.Name
	}
	return names
}

// Events lists, per provider, the event types the registered handlers
// take (as their Registrations name them; handlers registered by source
// name are left out), for tools that show what a binary handles.
func (r *Registry) Events() map[string][]string {
	out := map[string][]string{}
	for _, reg := range r.regs {
		if reg.Provider != "" {
			out[reg.Provider] = append(out[reg.Provider], reg.Events...)
		}
	}
	return out
}

// Provider returns the provider of a configured source.
func (r *Registry) Provider(source string) string { return r.sources[source].Provider }

// ErrResourceBusy is the answer of a processing batch (ProcessBatch)
// and of Event.Lock in one when another transaction holds the lock: the
// delivery is then processed alone, where locks are waited for.
var ErrResourceBusy = errors.New("handlers: the delivery's resource is locked by another transaction")

// ResourceBusyError is TryProcess's ErrResourceBusy: it names the lock,
// so that the deliveries waiting for one resource can wait their turn
// outside the database, one at a time.
type ResourceBusyError struct {
	// LockKey names the resource's lock; equal keys, one resource.
	LockKey string
}

func (e *ResourceBusyError) Error() string { return ErrResourceBusy.Error() }

// Is makes errors.Is(err, ErrResourceBusy) hold.
func (e *ResourceBusyError) Is(target error) bool { return target == ErrResourceBusy }

// Matches reports whether any handler is registered for d: when none is,
// Process records it skipped without touching the database.
func (r *Registry) Matches(d Delivery) bool { return len(r.matching(d)) > 0 }

// Batchable reports whether d may share a processing transaction with
// other deliveries: every handler it matches allows it (Registration.Batch).
func (r *Registry) Batchable(d Delivery) bool {
	for _, reg := range r.matching(d) {
		if !reg.Batch {
			return false
		}
	}
	return true
}

func (r *Registry) matching(d Delivery) []Registration {
	if d.Provider == "" {
		d.Provider = r.Provider(d.Source)
	}
	var matched []Registration
	for _, reg := range r.regs {
		if reg.matches(d.Source, d.Provider, d.EventType) {
			matched = append(matched, reg)
		}
	}
	return matched
}

// Process runs the matching handlers for d inside tx: it locks d's
// resource, decides staleness, calls each handler (LatestState ones only
// for fresh events), and records the resource's new version. The caller
// commits tx together with the delivery's outcome and the job's completion.
func (r *Registry) Process(ctx context.Context, tx pgx.Tx, jobs JobInserter, d Delivery) (Result, error) {
	return r.process(ctx, tx, jobs, d, true)
}

// TryProcess is Process without waiting for d's resource: when another
// transaction holds it, it returns a *ResourceBusyError at once and has
// done nothing but read. A caller that waits for a resource in a
// transaction holds a pool connection while it waits; many deliveries of
// one resource waiting so would take the pool from intake and from every
// other resource. TryProcess lets the caller wait without one.
func (r *Registry) TryProcess(ctx context.Context, tx pgx.Tx, jobs JobInserter, d Delivery) (Result, error) {
	return r.process(ctx, tx, jobs, d, false)
}

func (r *Registry) process(ctx context.Context, tx pgx.Tx, jobs JobInserter, d Delivery, wait bool) (Result, error) {
	if d.Provider == "" {
		d.Provider = r.Provider(d.Source)
	}
	matched := r.matching(d)
	if len(matched) == 0 {
		// Nothing to order: skip parsing the payload
		// (bench/README.md, Design decisions, "Payloads and JSON").
		return Result{Outcome: OutcomeSkipped}, nil
	}
	if wantGitHubEvent(matched) {
		d.parseGitHub()
	}
	res := resourceOf(&d, r.sources[d.Source].ResourceField)
	stale, err := begin(ctx, tx, d, res, wait)
	if err != nil {
		return Result{}, err
	}
	deferred, err := r.runHandlers(ctx, tx, jobs, d, res, stale, true, matched)
	if err == nil {
		err = end(ctx, tx, d, res, deferred)
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Outcome: OutcomeProcessed, Resource: res, Stale: stale}, nil
}

// runHandlers calls each matched handler (LatestState ones only for fresh
// events) and returns the statements and rows they deferred (Event.Defer,
// Event.DeferRow).
func (r *Registry) runHandlers(ctx context.Context, tx pgx.Tx, jobs JobInserter, d Delivery, res Resource, stale, wait bool, matched []Registration) (deferredWork, error) {
	logger := r.logger.With("source", d.Source, "delivery_id", d.DeliveryID, "inbox_id", d.InboxID, "event_type", d.EventType)
	var deferred deferredWork
	for _, reg := range matched {
		if stale && reg.Ordering == LatestState {
			logger.Info("stale event passed over", "handler", reg.Name, "resource", res.Key, "event_at", res.At)
			continue
		}
		e := &Event{Delivery: d, Resource: res, Stale: stale, Tx: tx, Logger: logger.With("handler", reg.Name), handler: reg.Name, jobs: jobs, wait: wait}
		if err := call(ctx, reg, e); err != nil {
			return deferredWork{}, err
		}
		deferred.stmts = append(deferred.stmts, e.deferred...)
		deferred.rows = append(deferred.rows, e.deferredRows...)
	}
	return deferred, nil
}

// call runs one handler, turning a panic into an error so that the job
// fails and retries and the delivery records why.
func call(ctx context.Context, reg Registration, e *Event) (err error) {
	span := trace.SpanFromContext(ctx) // tracing off: not recording, never ended
	if telemetry.On() {
		ctx, span = telemetry.Tracer().Start(ctx, "handler "+reg.Name, trace.WithAttributes(
			telemetry.Source.String(e.Source), telemetry.DeliveryID.String(e.DeliveryID), telemetry.Event.String(e.EventType)))
		defer span.End()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler %s panicked: %v\n%s", reg.Name, p, debug.Stack())
		}
		if err != nil && span.IsRecording() {
			span.SetStatus(codes.Error, err.Error())
		}
	}()
	if err := reg.Handler.Handle(ctx, e); err != nil {
		return fmt.Errorf("handler %s: %w", reg.Name, err)
	}
	return nil
}
