package destination

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookinbox/hookinbox/internal/telemetry"
)

// traceParentOf is the W3C traceparent of ctx's span, to store with a
// send; nil when ctx has none (tracing off).
func traceParentOf(ctx context.Context) *string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	telemetry.Propagator.Inject(ctx, carrier)
	if tp := carrier.Get("traceparent"); tp != "" {
		return &tp
	}
	return nil
}

// startAttemptSpan starts the client span of one attempt of l, a child of
// the processing that enqueued it (its stored traceparent), so a retry
// hours later still joins the delivery's trace.
func startAttemptSpan(ctx context.Context, d *dest, l *loadedSend) (context.Context, trace.Span) {
	if !telemetry.On() {
		return ctx, trace.SpanFromContext(ctx)
	}
	if l.TraceParent != nil {
		carrier := propagation.MapCarrier{"traceparent": *l.TraceParent}
		if sc := trace.SpanContextFromContext(telemetry.Propagator.Extract(context.Background(), carrier)); sc.IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
	}
	kind, name := trace.SpanKindClient, "POST "+d.Name
	if d.Kafka != nil || d.NATS != nil {
		kind, name = trace.SpanKindProducer, "publish "+d.Name
	}
	return telemetry.Tracer().Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(
		telemetry.Destination.String(d.Name), telemetry.Source.String(l.Source), telemetry.DeliveryID.String(l.DeliveryID),
		telemetry.Event.String(l.EventType), semconv.HTTPRequestMethodPost))
}

// endAttemptSpan records what the attempt got.
func endAttemptSpan(span trace.Span, res response) {
	if !span.IsRecording() {
		return // tracing off: the context's own span, not ours to end
	}
	if res.status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(res.status))
	}
	if !res.ok() {
		span.SetStatus(codes.Error, "attempt failed")
	}
	span.End()
}

// injectTraceparent sets the traceparent header of ctx's span, so that the
// destination's own trace continues the delivery's.
func injectTraceparent(ctx context.Context, h http.Header) {
	telemetry.Propagator.Inject(ctx, propagation.HeaderCarrier(h))
}
