package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTracingOrderTakesTurns(t *testing.T) {
	t.Parallel()
	var order []string
	for round := 1; round <= 4; round++ {
		order = append(order, tracingOrder(round)...)
	}
	require.Equal(t, []string{"off", "on", "on", "off", "off", "on", "on", "off"}, order)
}

// tracingPhaseOf is a phase of mode with requests deliveries, serve's
// and PostgreSQL's CPU seconds, and spans.
func tracingPhaseOf(mode string, round int, requests int64, service, postgres float64, p99 time.Duration, spans int64) tracingPhase {
	p := tracingPhase{Mode: mode, Round: round, ProcessedPerSec: float64(requests) / 20}
	p.Ingest.Requests, p.Ingest.RequestsPerSec = requests, float64(requests)/20
	p.Ingest.Latency.P50, p.Ingest.Latency.P99 = duration(p99/4), duration(p99)
	p.CPU = cpuUse{Seconds: 22, Service: service, Postgres: postgres, Bench: 1}
	if spans > 0 {
		p.Spans = spanCount{Exports: spans / 512, Bytes: 300 * spans, Spans: spans,
			ByName: map[string]int64{"POST /webhooks/{source}": requests, "handler issues": spans - requests}}
	}
	return p
}

func tracingPhasesFixture() []tracingPhase {
	return []tracingPhase{
		tracingPhaseOf(tracingOff, 1, 10_000, 2.0, 3.0, 10*time.Millisecond, 0),
		tracingPhaseOf(tracingOn, 1, 10_000, 3.0, 3.1, 14*time.Millisecond, 40_000),
		tracingPhaseOf(tracingOn, 2, 30_000, 7.2, 9.0, 18*time.Millisecond, 120_000),
		tracingPhaseOf(tracingOff, 2, 30_000, 4.8, 9.0, 12*time.Millisecond, 0),
	}
}

func TestSummarizeTracingPoolsAMode(t *testing.T) {
	t.Parallel()
	phases := tracingPhasesFixture()
	off, on := summarizeTracing(phases, tracingOff), summarizeTracing(phases, tracingOn)

	require.Equal(t, 2, off.Phases)
	require.Equal(t, int64(40_000), off.Requests)
	require.InDelta(t, 0.170, off.ServiceMs, 1e-9, "(2.0+4.8) s over 40,000: pooled, not the mean of 0.200 and 0.160")
	require.InDelta(t, 0.160, off.ServiceMsMin, 1e-9)
	require.InDelta(t, 0.200, off.ServiceMsMax, 1e-9)
	require.InDelta(t, 0.300, off.PostgresMs, 1e-9)
	require.Equal(t, duration(11*time.Millisecond), off.AckP99, "the phases' mean")
	require.Zero(t, off.Spans)
	require.Empty(t, off.SpansByName)

	require.InDelta(t, 0.255, on.ServiceMs, 1e-9)
	require.InDelta(t, 4.0, on.Spans, 1e-9)
	require.InDelta(t, 1200.0, on.SpanBytes, 1e-9)
	require.Equal(t, map[string]float64{"POST /webhooks/{source}": 1, "handler issues": 3}, on.SpansByName)
	require.Equal(t, "1.50", ratio(on.ServiceMs, off.ServiceMs))

	require.Equal(t, tracingMode{}, summarizeTracing(phases[:1], tracingOn), "a mode without phases")
}

func TestRatioWithoutABase(t *testing.T) {
	t.Parallel()
	require.Equal(t, "-", ratio(1, 0))
	require.Equal(t, "0.50", ratio(1, 2))
	require.Zero(t, perRequestMs(3, 0))
	require.Equal(t, "handler issues 3.00, POST /webhooks/{source} 1.00, a 1.00",
		spansByName(map[string]float64{"a": 1, "POST /webhooks/{source}": 1, "handler issues": 3}))
}

// TestShowPrintsTracingResults writes a tracing result as a run does and
// prints it again with -show: every figure formats, and the ratio is the
// pooled one.
func TestShowPrintsTracingResults(t *testing.T) {
	t.Parallel()
	opts, err := parseOptions([]string{"-scenario", "tracing"})
	require.NoError(t, err)
	res := tracingResult{runInfo: runInfo{Options: opts.export()}, Rate: 1300, Phases: tracingPhasesFixture()}
	res.Pgbench.TPS, res.Pgbench.Transactions, res.PgbenchCPU.Seconds = 5200, 104_000, 20
	res.Off, res.On = summarizeTracing(res.Phases, tracingOff), summarizeTracing(res.Phases, tracingOn)
	res.Phases[1].Profile = "bench/results/x.tracing-on-1.pprof"
	path := filepath.Join(t.TempDir(), "x.tracing.json")
	require.NoError(t, writeJSON(path, res))

	var out bytes.Buffer
	require.NoError(t, show(&out, path))
	s := out.String()
	require.False(t, strings.Contains(s, "%!"), "formatting error in:\n%s", s)
	require.Contains(t, s, "hookinbox CPU per delivery, tracing on ÷ off: 1.50 (0.255 / 0.170 ms)")
	require.Contains(t, s, "spans a delivery, tracing on: handler issues 3.00, POST /webhooks/{source} 1.00")
	require.Contains(t, s, "go tool pprof -top bench/results/x.tracing-on-1.pprof")
}
