// Package telemetry sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables, and names the tracer and attributes hookinbox's
// spans use.
//
// Tracing is off unless OTEL_TRACES_EXPORTER names an exporter ("otlp",
// "console", …, as go.opentelemetry.io/contrib/exporters/autoexport reads
// it, with OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER,
// OTEL_SERVICE_NAME and the rest). Off, the global tracer provider is
// OpenTelemetry's no-op one: a span costs a function call that returns at
// once, and nothing is exported.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of hookinbox's spans.
const Name = "github.com/hookinbox/hookinbox"

// Attributes of hookinbox's spans, besides the semantic conventions'. None
// holds a payload or a secret.
var (
	Source      = attribute.Key("hookinbox.source")
	DeliveryID  = attribute.Key("hookinbox.delivery_id")
	Event       = attribute.Key("hookinbox.event")
	Destination = attribute.Key("hookinbox.destination")
	Outcome     = attribute.Key("hookinbox.outcome")
)

// Tracer is hookinbox's tracer on the global provider.
func Tracer() trace.Tracer { return otel.Tracer(Name) }

// Propagator is W3C trace context: what destinations receive as
// traceparent, and what a job's metadata carries.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// on is set once a tracer provider is in use: until then hookinbox starts
// no span at all, so tracing off costs a load of this flag per span.
var on atomic.Bool

// On reports whether hookinbox's spans are being recorded (Use was
// called); callers skip building a span's attributes when not.
func On() bool { return on.Load() }

// Use makes tp the global tracer provider, which hookinbox's spans and
// River's middleware use, with W3C trace context as the propagator.
func Use(tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator)
	on.Store(true)
}

// Enabled reports whether the environment turns tracing on: an exporter
// named in OTEL_TRACES_EXPORTER, and the SDK not disabled.
func Enabled(lookup func(string) (string, bool)) bool {
	name, _ := lookup("OTEL_TRACES_EXPORTER")
	disabled, _ := lookup("OTEL_SDK_DISABLED")
	return name != "" && name != "none" && disabled != "true"
}

// Setup installs a tracer provider exporting as the environment says, if
// it turns tracing on (Enabled), and returns what flushes and stops it.
// lookup reads the environment.
func Setup(ctx context.Context, lookup func(string) (string, bool)) (shutdown func(context.Context) error, err error) {
	if !Enabled(lookup) {
		return func(context.Context) error { return nil }, nil
	}
	exporter, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName("hookinbox")))
	if err != nil {
		return nil, err
	}
	// The environment's OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	// over the default name.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	Use(tp)
	return func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx))
	}, nil
}
