package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestLogLinesCarryTheirSpan(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("role", "all")
	ctx, span := sdktrace.NewTracerProvider().Tracer("t").Start(context.Background(), "s")
	defer span.End()
	logger.InfoContext(ctx, "traced")
	logger.Info("untraced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	sc := span.SpanContext()
	if !strings.Contains(lines[0], "trace_id="+sc.TraceID().String()) || !strings.Contains(lines[0], "span_id="+sc.SpanID().String()) {
		t.Fatalf("traced line without its ids: %s", lines[0])
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Fatalf("untraced line with ids: %s", lines[1])
	}
}
