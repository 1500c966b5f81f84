package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// The tracing scenario (bench/README.md, "Tracing"): what OpenTelemetry
// tracing on, every span kept and exported, costs one default serve
// against tracing off, under the same open-loop load of GitHub `issues`
// deliveries, each processed by the shipped handlers and sent to one
// destination. A fresh serve runs each phase, with or without the OTEL_*
// variables that point it at a collector in the bench process; the modes
// take turns, so that both share the machine's drift.

// tracingModes are a phase's modes: serve without and with tracing.
const (
	tracingOff = "off"
	tracingOn  = "on"
)

type tracingResult struct {
	runInfo
	pgbenchBase
	Rate float64 `json:"rate_per_sec"` // the open loop's, in every phase
	// Phases are in the order they ran.
	Phases []tracingPhase `json:"phases"`
	Off    tracingMode    `json:"off"`
	On     tracingMode    `json:"on"`
}

// tracingPhase is one serve's phase: the open loop at Rate and the work
// it left, until every delivery was processed and sent.
type tracingPhase struct {
	Mode  string `json:"mode"`
	Round int    `json:"round"`
	destPhase
	// Sent is the receiver's requests over the phase: one per accepted
	// delivery.
	Sent int64 `json:"sent"`
	// ProcessedPerSec is the phase's rows over their first to last
	// processed_at.
	ProcessedPerSec float64 `json:"processed_per_sec"`
	// Spans is what the collector got from this serve, from its start to
	// its exit (a traced serve exports its last spans as it stops).
	Spans   spanCount `json:"spans"`
	Profile string    `json:"profile,omitempty"`
}

func runTracing(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := tracingResult{runInfo: newRunInfo(ctx, opts, root, progress)}
	out := resultsPath(opts, root, res.Started, "tracing")
	col, err := startCollector()
	if err != nil {
		return err
	}
	defer col.close()
	r, issues, recv, err := setupReceiverRig(ctx, opts, root, progress, &res.runInfo, &res.pgbenchBase)
	if err != nil {
		return err
	}
	defer r.close()
	res.Rate = opts.tracingLoad * res.Pgbench.TPS
	t := tracingRun{r: r, issues: issues, recv: recv, col: col, rate: res.Rate, out: out, progress: progress}
	for round := 1; round <= opts.tracingRounds; round++ {
		for _, mode := range tracingOrder(round) {
			p, err := t.phase(ctx, mode, round)
			if err != nil {
				return err
			}
			res.Phases = append(res.Phases, p)
		}
	}
	res.Off, res.On = summarizeTracing(res.Phases, tracingOff), summarizeTracing(res.Phases, tracingOn)
	res.finish()
	printTracing(os.Stdout, res)
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// tracingOrder is the modes' order in a round: off first in odd rounds,
// on first in even ones. Over two rounds (off, on, on, off) a drift of
// the machine or of the growing tables through the run weighs on both
// modes alike, where strict turns would put each on phase after an off
// phase.
func tracingOrder(round int) []string {
	if round%2 == 1 {
		return []string{tracingOff, tracingOn}
	}
	return []string{tracingOn, tracingOff}
}

// tracingRun is what every phase of a run shares.
type tracingRun struct {
	r        *rig
	issues   []payload
	recv     *receiver
	col      *collector
	rate     float64
	out      string
	progress func(string, ...any)
}

// phase starts a serve in mode, runs the open loop on it until its work
// is done, and stops it.
func (t tracingRun) phase(ctx context.Context, mode string, round int) (tracingPhase, error) {
	p := tracingPhase{Mode: mode, Round: round}
	name := fmt.Sprintf("tracing-%s-%d", mode, round)
	so := serviceOptions{Role: "all", Name: name,
		Extra: fmt.Sprintf(destConfig, destName, t.recv.url, destSecret, t.r.opts.destInFlight, 0.0, destName, false)}
	if mode == tracingOn {
		so.Env = t.col.env()
	}
	spans := t.col.snapshot()
	svc, err := t.r.startWith(ctx, so)
	if err != nil {
		return p, err
	}
	defer svc.stop()
	gen := newGenerator(svc.webhookURL, "issues", t.issues, t.r.opts.concurrency, t.r.opts.dupShare)
	defer gen.close()
	from, err := maxInboxID(ctx, t.r.db)
	if err != nil {
		return p, err
	}
	// The profile starts with the phase's VACUUM and CHECKPOINT, while
	// serve idles and adds no samples, and covers most of the load.
	d := t.r.opts.duration
	path := fmt.Sprintf("%s-%s-%d.pprof", strings.TrimSuffix(t.out, ".json"), mode, round)
	profiled := profileAsync(ctx, svc, t.r.opts.profile, d, path)
	t.progress("round %d, tracing %s: open loop at %.0f/s, %d connections, %s", round, mode, t.rate, gen.conns, d)
	if p.destPhase, err = destRunPhase(ctx, t.r, svc, gen, t.recv, t.rate, nil, t.progress); err != nil {
		return p, err
	}
	p.Sent = t.recv.requests.Load()
	if p.Profile, err = profiled(); err != nil {
		t.progress("warning: %v", err)
	}
	if err := svc.stop(); err != nil {
		t.progress("warning: %v", err)
	}
	p.Spans = t.col.snapshot().since(spans)
	if p.ProcessedPerSec, err = processedRate(ctx, t.r, from); err != nil {
		return p, err
	}
	l := p.Ingest
	t.progress("round %d, tracing %s: %.0f answered/s, %d errors, ack p50 %s p99 %s; hookinbox %.3f ms/delivery; %d spans (%.2f a delivery)",
		round, mode, l.RequestsPerSec, l.Errors, l.Latency.P50, l.Latency.P99, perRequestMs(p.CPU.Service, l.Requests),
		p.Spans.Spans, perRequest(float64(p.Spans.Spans), l.Requests))
	return p, nil
}

// processedRate is the rows after inbox id from over their first to last
// processed_at: processing's rate through the phase.
func processedRate(ctx context.Context, r *rig, from int64) (float64, error) {
	var (
		n           int64
		first, last *time.Time
	)
	err := r.db.QueryRow(ctx, `SELECT count(*), min(processed_at), max(processed_at) FROM delivery WHERE id > $1`, from).
		Scan(&n, &first, &last)
	if err != nil || first == nil || last == nil || !last.After(*first) {
		return 0, err
	}
	return float64(n) / last.Sub(*first).Seconds(), nil
}
