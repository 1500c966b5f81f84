package ingest

import (
	"context"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookinbox/hookinbox/internal/telemetry"
)

// startRequestSpan starts the server span of one webhook request. A
// traceparent the sender sent is recorded as a link, never trusted as the
// parent: the edge is untrusted, and a sender must not choose our trace.
func startRequestSpan(c *fiber.Ctx, source string) (context.Context, trace.Span) {
	if !telemetry.On() {
		return c.UserContext(), trace.SpanFromContext(c.UserContext())
	}
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithNewRoot(),
		trace.WithAttributes(semconv.HTTPRequestMethodPost, semconv.HTTPRoute("/webhooks/{source}"), telemetry.Source.String(source)),
	}
	if tp := c.Get("Traceparent"); tp != "" {
		carrier := propagation.HeaderCarrier(http.Header{"Traceparent": {tp}})
		if sc := trace.SpanContextFromContext(telemetry.Propagator.Extract(context.Background(), carrier)); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		}
	}
	return telemetry.Tracer().Start(c.UserContext(), "POST /webhooks/{source}", opts...)
}

// endRequestSpan records the answer.
func endRequestSpan(span trace.Span, outcome string, err error) {
	if !span.IsRecording() {
		return
	}
	// A 4xx is the sender's error, not the server's (semantic
	// conventions): only the outcome is recorded.
	span.SetAttributes(telemetry.Outcome.String(outcome))
	if errors.Is(err, ErrStarting) || outcome == CodeUnavailable {
		span.SetStatus(codes.Error, outcome)
	}
}

// startBatchSpan starts the span of one ingest batch's transaction, whose
// job insert carries its trace context to the processing job: the span of
// the request itself when the batch holds one, else a span linking every
// request's.
func startBatchSpan(batch []*pending) (context.Context, trace.Span) {
	if !telemetry.On() {
		return context.Background(), trace.SpanFromContext(context.Background())
	}
	if len(batch) == 1 && batch[0].span.IsValid() {
		ctx := trace.ContextWithRemoteSpanContext(context.Background(), batch[0].span)
		return telemetry.Tracer().Start(ctx, "ingest batch")
	}
	links := make([]trace.Link, 0, len(batch))
	for _, p := range batch {
		if p.span.IsValid() {
			links = append(links, trace.Link{SpanContext: p.span})
		}
	}
	return telemetry.Tracer().Start(context.Background(), "ingest batch", trace.WithLinks(links...))
}
