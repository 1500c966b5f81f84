package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookinbox/hookinbox/internal/telemetry"
	"github.com/hookinbox/hookinbox/verify"
)

// receiveResponse is the body of a 202 or 200.
type receiveResponse struct {
	ID         int64   `json:"id"`
	Source     string  `json:"source"`
	DeliveryID string  `json:"delivery_id"`
	Status     Outcome `json:"status"`
	// DuplicateOf names the stored delivery whose body this one repeats
	// under another id (Source.DedupBodies).
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

// outcomeDuplicateBody is the observed outcome of a duplicate found by its
// body under a new delivery id: a sender's repeat, or a captured request
// replayed.
const outcomeDuplicateBody = "duplicate_body"

// outcomeHandshake is the observed outcome of a handshake answered.
const outcomeHandshake = "handshake"

// unknownSource labels observations of requests for sources not configured:
// the name is the caller's, and must not become a metric label.
const unknownSource = "_unknown"

// observed is receive, reported to Config.Observe.
func (s *Server) observed(c *fiber.Ctx) error {
	start := time.Now()
	// Fiber's c.Params points into a buffer the next request reuses: the
	// label, kept by Prometheus, is the configured source's own name.
	src, known := s.sources[c.Params("source")]
	label := src.Name
	if !known {
		label = unknownSource
	}
	ctx, span := startRequestSpan(c, label)
	c.SetUserContext(ctx)
	defer span.End()
	var (
		outcome string
		err     = errUnknownSource
	)
	if known {
		outcome, err = s.receive(c, src)
	}
	if err != nil {
		_, outcome = classify(err)
		if errors.Is(err, ErrDeliveryConflict) {
			outcome = "conflict"
		}
	}
	endRequestSpan(span, outcome, err)
	s.cfg.Observe(label, outcome, time.Since(start))
	return err
}

// receive is POST /webhooks/:source for a configured source: verify,
// record with its job, answer.
func (s *Server) receive(c *fiber.Ctx, src Source) (string, error) {
	if err := s.cfg.Accepting(); err != nil {
		return "", fmt.Errorf("not accepting deliveries yet: %w", err)
	}
	header := requestHeader(c)
	// The body is read here, as it arrives, into a buffer of its own: the
	// payload goes to the database and may be batched after the handler
	// returns, when Fiber reuses its request buffers.
	body, err := readBody(c, s.cfg.MaxBodyBytes)
	if err != nil {
		return "", err
	}

	d, err := verify.VerifyRequest(c.UserContext(), src.Verifier,
		verify.Request{Body: body, Header: header, RawQuery: string(c.Request().URI().QueryString())})
	if err != nil {
		return "", err
	}
	if d.Reply != nil {
		// A verified handshake (Slack's url_verification, Zoom's
		// endpoint.url_validation, Discord's PING): the sender needs this
		// answer, and there is nothing to store.
		s.logger.LogAttrs(c.UserContext(), slog.LevelInfo, "handshake answered", slog.String("source", src.Name))
		if d.Reply.ContentType != "" {
			c.Set(fiber.HeaderContentType, d.Reply.ContentType)
		}
		return outcomeHandshake, c.Status(d.Reply.Status).Send(d.Reply.Body)
	}
	// After verification: an unsigned request gets its 401 first, and the
	// provider's own headers get verify's more precise answers.
	if err := checkHeaderValues(header); err != nil {
		return "", err
	}
	src.redact(header)

	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.StoreTimeout)
	defer cancel()
	if telemetry.On() {
		trace.SpanFromContext(ctx).SetAttributes(telemetry.DeliveryID.String(d.ID), telemetry.Event.String(d.EventType))
	}
	delivery := Delivery{
		Source:     src.Name,
		DeliveryID: d.ID,
		EventType:  d.EventType,
		OccurredAt: d.OccurredAt,
		Headers:    header,
		Payload:    body,
		Volatile:   src.volatile,
		DedupBody:  src.DedupBodies,
		// An unsigned event type is the replayer's to choose.
		DedupBodyByType: src.DedupBodiesByType,
	}
	if src.DedupBodies {
		delivery.DedupContent = verify.DedupContent(src.Provider, body)
	}
	var rec Recorded
	if s.batch != nil {
		rec, err = s.batch.record(ctx, delivery)
	} else {
		rec, err = s.cfg.Inbox.Record(ctx, delivery)
	}
	if errors.Is(err, ErrDeliveryConflict) {
		s.recordConflict(ctx, delivery, rec.ID)
	}
	if err != nil {
		return "", err
	}

	status := fiber.StatusAccepted
	if rec.Outcome == OutcomeDuplicate {
		status = fiber.StatusOK
	}
	s.logStored(c.UserContext(), src.Name, d, rec)
	observed := string(rec.Outcome)
	if rec.DuplicateOf != "" {
		observed = outcomeDuplicateBody
	}
	return observed, c.Status(status).JSON(receiveResponse{ID: rec.ID, Source: src.Name, DeliveryID: d.ID, Status: rec.Outcome,
		DuplicateOf: rec.DuplicateOf})
}

// logStored writes a stored delivery's info line, unless this second's
// are used up (Config.LogDeliveriesPerSecond). LogAttrs: without boxing
// each attribute.
func (s *Server) logStored(ctx context.Context, source string, d verify.Delivery, rec Recorded) {
	ok, held := s.lines.Allow(time.Now())
	if !ok {
		return
	}
	attrs := [7]slog.Attr{slog.String("source", source), slog.String("delivery_id", d.ID),
		slog.Int64("inbox_id", rec.ID), slog.String("event_type", d.EventType)}
	n := 4
	if rec.DuplicateOf != "" {
		attrs[n] = slog.String("duplicate_of", rec.DuplicateOf)
		n++
	}
	if rec.JobID != 0 { // a duplicate's job was enqueued the first time
		attrs[n] = slog.Int64("job_id", rec.JobID)
		n++
	}
	if held > 0 {
		attrs[n] = slog.Int("suppressed_since_last", held)
		n++
	}
	s.logger.LogAttrs(ctx, slog.LevelInfo, deliveryLogMessage(rec.Outcome), attrs[:n]...)
}

// recordConflict keeps the refused body for operators (delivery_conflict),
// after the inbox transaction decided the conflict. The answer is the 409
// either way: a record that cannot be written is logged, not retried.
func (s *Server) recordConflict(ctx context.Context, d Delivery, storedID int64) {
	if err := s.cfg.Inbox.RecordConflict(ctx, d, storedID); err != nil {
		s.logger.Warn("conflicting delivery not recorded", "source", d.Source, "delivery_id", d.DeliveryID, "error", err)
	}
}

// deliveryLogMessage is "delivery accepted" or "delivery duplicate",
// without building the string per request.
func deliveryLogMessage(o Outcome) string {
	if o == OutcomeDuplicate {
		return "delivery duplicate"
	}
	return "delivery accepted"
}

// checkHeaderValues refuses what the inbox could not store.
func checkHeaderValues(h http.Header) error {
	for name, values := range h {
		for _, v := range values {
			if strings.IndexByte(v, 0) >= 0 {
				return fmt.Errorf("%s: %w", name, errNULInHeader)
			}
		}
	}
	return nil
}

// requestHeader copies the request's headers into an http.Header, the
// framework-free form verify/ and the inbox take.
func requestHeader(c *fiber.Ctx) http.Header {
	h := make(http.Header, c.Request().Header.Len())
	c.Request().Header.VisitAll(func(k, v []byte) {
		h.Add(string(k), string(v))
	})
	return h
}
