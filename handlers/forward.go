package handlers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

//go:embed sql/inbox_payload.sql
var inboxPayloadSQL string

// ForwardConfig configures forwarding of one source's deliveries.
type ForwardConfig struct {
	// Source is the source whose deliveries are forwarded. Required.
	Source string
	// URL receives each delivery's raw payload. Required.
	URL string
	// Pool is where the payload is read from. Required.
	Pool *pgxpool.Pool
	// Client defaults to a client with a DefaultDownstreamTimeout timeout.
	Client *http.Client
	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

// RegisterForwarder forwards every delivery of cfg.Source, byte for byte,
// to cfg.URL with Idempotency-Key: Key("forward") and the original
// webhook-id, from its own job, retried with the same key.
func RegisterForwarder(r *Registry, cfg ForwardConfig) error {
	if cfg.Source == "" || cfg.URL == "" || cfg.Pool == nil {
		return errors.New("handlers: a forwarder needs Source, URL and Pool")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if r.forward == nil {
		r.forward = map[string]ForwardConfig{}
		AddWorker(r, &forwardWorker{registry: r})
	}
	r.forward[cfg.Source] = cfg
	name := "forward." + cfg.Source
	return r.Register(Registration{
		Name:     name,
		Source:   cfg.Source,
		Events:   []string{AnyEvent},
		Batch:    true,       // database work only: the call out runs in a follow-up job
		Ordering: EveryEvent, // the receiver decides what an old event means
		Handler: HandlerFunc(func(ctx context.Context, e *Event) error {
			_, err := e.EnqueueOnce(ctx, "forward", ForwardArgs{
				Source: e.Source, DeliveryID: e.DeliveryID, InboxID: e.InboxID, Key: e.Key("forward"),
			}, nil)
			return err
		}),
	})
}

// ForwardArgs asks for one delivery to be forwarded.
type ForwardArgs struct {
	Source     string `json:"source"`
	DeliveryID string `json:"delivery_id"`
	InboxID    int64  `json:"inbox_id"`
	Key        string `json:"key" river:"unique"`
}

func (ForwardArgs) Kind() string { return "forward_delivery" }
func (ForwardArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDownstream, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type forwardWorker struct {
	river.WorkerDefaults[ForwardArgs]
	registry *Registry
}

func (w *forwardWorker) Work(ctx context.Context, job *river.Job[ForwardArgs]) error {
	a := job.Args
	cfg, ok := w.registry.forward[a.Source]
	if !ok {
		return river.JobCancel(fmt.Errorf("source %q no longer forwards", a.Source))
	}
	var (
		payload []byte
		headers http.Header
	)
	err := cfg.Pool.QueryRow(ctx, inboxPayloadSQL, pgx.NamedArgs{"id": a.InboxID}).Scan(&payload, &headers)
	if errors.Is(err, pgx.ErrNoRows) {
		// Retention holds a row while its forward is unfinished: only a
		// hand-made delete gets here. Say so; the job cannot go on.
		err := fmt.Errorf("inbox row %d is gone; not forwarded", a.InboxID)
		cfg.Logger.Error("forward cancelled", "source", a.Source, "delivery_id", a.DeliveryID, "inbox_id", a.InboxID, "error", err)
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	status, err := Call{
		URL: cfg.URL, Key: a.Key, Body: payload, ContentType: headers.Get("Content-Type"),
		Header: http.Header{"Webhook-Id": {a.DeliveryID}},
	}.Post(ctx, cfg.Client)
	log := cfg.Logger.With("source", a.Source, "delivery_id", a.DeliveryID, "inbox_id", a.InboxID,
		"step", "forward", "idempotency_key", a.Key, "attempt", job.Attempt, "status", status)
	if err != nil {
		log.Warn("forward failed", "error", err)
		return JobResult(job.JobRow, err)
	}
	log.Info("forwarded")
	return nil
}
