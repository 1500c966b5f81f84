package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// tracingMode is one mode over its phases. CPU and spans per delivery
// are pooled (all its phases' CPU over all their requests), so a longer
// phase weighs more; latencies and rates are the phases' mean. Every
// request counts as a delivery: -dup-share of them are a provider's
// resends, answered `200 duplicate` and neither processed nor sent.
type tracingMode struct {
	Phases   int   `json:"phases"`
	Requests int64 `json:"requests"`
	// ServiceMs is serve's CPU ms per delivery; ServiceMsMin and
	// ServiceMsMax are its phases' lowest and highest, the spread the
	// ratio is read against.
	ServiceMs    float64 `json:"hookinbox_cpu_ms_per_delivery"`
	ServiceMsMin float64 `json:"hookinbox_cpu_ms_min"`
	ServiceMsMax float64 `json:"hookinbox_cpu_ms_max"`
	PostgresMs   float64 `json:"postgres_cpu_ms_per_delivery"`
	// BenchMs is the bench process's: the load generator, the receiver
	// and, with tracing on, the collector decoding the spans.
	BenchMs         float64  `json:"bench_cpu_ms_per_delivery"`
	AckP50          duration `json:"ack_p50"`
	AckP99          duration `json:"ack_p99"`
	ProcessedPerSec float64  `json:"processed_per_sec"`
	Spans           float64  `json:"spans_per_delivery"`
	SpanBytes       float64  `json:"span_bytes_per_delivery"` // as sent to the collector
	// SpansByName is spans per delivery by span name.
	SpansByName map[string]float64 `json:"spans_by_name_per_delivery,omitempty"`
}

// summarizeTracing pools the phases of one mode.
func summarizeTracing(phases []tracingPhase, mode string) tracingMode {
	m := tracingMode{SpansByName: map[string]float64{}}
	var svc, pg, bench, p50, p99, processed float64
	var spans spanCount
	spans.ByName = map[string]int64{}
	for _, p := range phases {
		if p.Mode != mode {
			continue
		}
		n := p.Ingest.Requests
		ms := perRequestMs(p.CPU.Service, n)
		if m.Phases == 0 || ms < m.ServiceMsMin {
			m.ServiceMsMin = ms
		}
		m.ServiceMsMax = max(m.ServiceMsMax, ms)
		m.Phases++
		m.Requests += n
		svc, pg, bench = svc+p.CPU.Service, pg+p.CPU.Postgres, bench+p.CPU.Bench
		p50, p99 = p50+float64(p.Ingest.Latency.P50), p99+float64(p.Ingest.Latency.P99)
		processed += p.ProcessedPerSec
		spans.Spans, spans.Bytes = spans.Spans+p.Spans.Spans, spans.Bytes+p.Spans.Bytes
		for name, k := range p.Spans.ByName {
			spans.ByName[name] += k
		}
	}
	if m.Phases == 0 {
		return tracingMode{}
	}
	k := float64(m.Phases)
	m.ServiceMs, m.PostgresMs, m.BenchMs = perRequestMs(svc, m.Requests), perRequestMs(pg, m.Requests), perRequestMs(bench, m.Requests)
	m.AckP50, m.AckP99, m.ProcessedPerSec = duration(p50/k), duration(p99/k), processed/k
	m.Spans, m.SpanBytes = perRequest(float64(spans.Spans), m.Requests), perRequest(float64(spans.Bytes), m.Requests)
	for name, n := range spans.ByName {
		m.SpansByName[name] = perRequest(float64(n), m.Requests)
	}
	return m
}

// perRequest is x per request, 0 without requests.
func perRequest(x float64, requests int64) float64 {
	if requests <= 0 {
		return 0
	}
	return x / float64(requests)
}

// perRequestMs is CPU seconds as milliseconds per request.
func perRequestMs(seconds float64, requests int64) float64 {
	return 1000 * perRequest(seconds, requests)
}

// ratio is on ÷ off to two decimals, "-" when off is nothing to divide by.
func ratio(on, off float64) string {
	if off <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", on/off)
}

// spansByName lists spans per delivery by name, most first.
func spansByName(byName map[string]float64) string {
	names := slices.SortedFunc(maps.Keys(byName), func(a, b string) int {
		return cmp.Or(cmp.Compare(byName[b], byName[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.2f", name, byName[name])
	}
	return strings.Join(parts, ", ")
}

func printTracing(w io.Writer, res tracingResult) {
	printHeader(w, "tracing: one default serve with tracing on against off", res.runInfo)
	fmt.Fprintf(w, "traffic   GitHub issues (payloads %v–%v B), %.0f%% duplicates, processed by the shipped handlers; each sent to one destination (max_in_flight %v, signed, route issues)\n",
		res.Options["payload_min"], res.Options["payload_max"], 100*res.Options["dup_share"].(float64), res.Options["dest_in_flight"])
	fmt.Fprintf(w, "pgbench   %.0f tps (one delivery's transaction, %d clients; %s); open loop at %.0f/s (%.2f×), %v connections, %v a phase; phases of each mode: %v\n",
		res.Pgbench.TPS, res.Pgbench.Clients, pgbenchOther(res.Pgbench, res.PgbenchCPU), res.Rate, res.Options["tracing_load"],
		res.Options["concurrency"], res.Options["duration"], res.Options["tracing_rounds"])
	fmt.Fprintln(w, "tracing   on: OTEL_TRACES_EXPORTER=otlp, http/protobuf to a collector in the bench process, OTEL_TRACES_SAMPLER=always_on; off: no OTEL_* variable")
	fmt.Fprintln(w)
	printTracingPhases(w, res.Phases)
	fmt.Fprintln(w)
	printTracingModes(w, res.Off, res.On)
	if len(res.On.SpansByName) > 0 {
		fmt.Fprintf(w, "\nspans a delivery, tracing on: %s\n", spansByName(res.On.SpansByName))
	}
	for _, p := range res.Phases {
		if p.Spans.Rejected > 0 {
			fmt.Fprintf(w, "  round %d, tracing %s: the collector rejected %d exports\n", p.Round, p.Mode, p.Spans.Rejected)
		}
	}
	for _, p := range res.Phases {
		if p.Profile != "" {
			fmt.Fprintf(w, "CPU profile of serve, round %d, tracing %s: go tool pprof -top %s\n", p.Round, p.Mode, p.Profile)
		}
	}
	fmt.Fprintf(w, "\ntook %s\n", res.Finished.Sub(res.Started).Round(time.Second))
}

func printTracingPhases(w io.Writer, phases []tracingPhase) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "round\ttracing\tanswered/s\terrors\tack p50\tack p99\t→processed p99\tprocessed/s\tsent\tdone after\thookinbox ms\tpostgres ms\tbench ms\tspans\tspan B\tbusy\tother\t\n")
	for _, p := range phases {
		l, n := p.Ingest, p.Ingest.Requests
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%d\t%s\t%s\t%s\t%.0f\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.0f\t%.0f%%\t%.2f\t\n",
			p.Round, p.Mode, l.RequestsPerSec, l.Errors, l.Latency.P50, l.Latency.P99, p.AckToProcessed.P99, p.ProcessedPerSec,
			p.Sent, p.Settled, perRequestMs(p.CPU.Service, n), perRequestMs(p.CPU.Postgres, n), perRequestMs(p.CPU.Bench, n),
			perRequest(float64(p.Spans.Spans), n), perRequest(float64(p.Spans.Bytes), n), 100*p.CPU.MachineBusy, p.CPU.Other/p.CPU.Seconds)
	}
	tw.Flush()
	fmt.Fprintln(w, "  ms, spans, span B: per delivery (request); CPU from the load's start until every delivery was processed and sent (done after: after the load)")
	fmt.Fprintln(w, "  bench: the load generator, the receiver and the collector (one process); other: cores used outside the run")
}

func printTracingModes(w io.Writer, off, on tracingMode) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "tracing\tphases\thookinbox ms/delivery\t(phases)\tpostgres ms\tserve + postgres\tack p50\tack p99\tprocessed/s\tspans/delivery\tspan B/delivery\t\n")
	for _, m := range []struct {
		name string
		m    tracingMode
	}{{tracingOff, off}, {tracingOn, on}} {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f–%.3f\t%.3f\t%.3f\t%s\t%s\t%.0f\t%.2f\t%.0f\t\n", m.name, m.m.Phases, m.m.ServiceMs,
			m.m.ServiceMsMin, m.m.ServiceMsMax, m.m.PostgresMs, m.m.ServiceMs+m.m.PostgresMs, m.m.AckP50, m.m.AckP99,
			m.m.ProcessedPerSec, m.m.Spans, m.m.SpanBytes)
	}
	fmt.Fprintf(tw, "on ÷ off\t\t%s\t\t%s\t%s\t%s\t%s\t%s\t\n", ratio(on.ServiceMs, off.ServiceMs), ratio(on.PostgresMs, off.PostgresMs),
		ratio(on.ServiceMs+on.PostgresMs, off.ServiceMs+off.PostgresMs), ratio(float64(on.AckP50), float64(off.AckP50)),
		ratio(float64(on.AckP99), float64(off.AckP99)), ratio(on.ProcessedPerSec, off.ProcessedPerSec))
	tw.Flush()
	fmt.Fprintln(w, "  CPU and spans pooled over a mode's phases; ack and processed/s their mean")
	fmt.Fprintf(w, "\nhookinbox CPU per delivery, tracing on ÷ off: %s (%.3f / %.3f ms)\n", ratio(on.ServiceMs, off.ServiceMs), on.ServiceMs, off.ServiceMs)
}
