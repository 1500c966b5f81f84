package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"
)

// The steady-load goals for one default serve (bench/README.md, "Steady
// load, one default serve"), read off a steady run's steps. They are
// computed when the report is printed, not stored, so -show prints them
// for older results files too.

// ackGoalAtHalf is the steady-load bound on the ack p99 at 0.5× pgbench's
// rate.
const ackGoalAtHalf = 25 * time.Millisecond

// steadyTargets returns the goals and how res did, or nil when the loads
// are not fractions of the run's own pgbench rate (-steady-base) or the
// run lacks the 0.25× and 0.5× steps the goals are stated at.
func steadyTargets(res steadyResult) []target {
	if res.Base != res.Pgbench.TPS {
		return nil
	}
	quarter, half := res.step(0.25), res.step(0.5)
	if quarter == nil || half == nil {
		return nil
	}
	top := res.step(res.MaxSustained)
	ts := []target{{
		Name:     "highest sustained step ÷ pgbench tps",
		Measured: fmt.Sprintf("%.2f×", res.MaxSustained),
		Goal:     "≥ 1.00×",
		Met:      res.MaxSustained >= 1-1e-9,
	}, {
		Name:     "ack p99 at 0.5×",
		Measured: half.Ingest.Latency.P99.String(),
		Goal:     "≤ " + ackGoalAtHalf.String(),
		Met:      half.Holds && time.Duration(half.Ingest.Latency.P99) <= ackGoalAtHalf,
	}, {
		Name:     "ack→processed p99 at 0.5×",
		Measured: half.AckToProcessed.P99.String(),
		Goal:     "≤ 1s",
		Met:      half.Holds && time.Duration(half.AckToProcessed.P99) <= time.Second,
	}}
	ratio := target{Name: "CPU ms/req at 0.25× ÷ at the highest sustained step", Goal: "≤ 2", Measured: "-"}
	if top != nil {
		q, t := quarter.cpuPerRequest(), top.cpuPerRequest()
		r := q / t
		ratio.Measured = fmt.Sprintf("%.2f (%.3f ÷ %.3f at %.2f×)", r, q, t, top.Load)
		if db := res.databaseRatio(); !math.IsNaN(db) {
			ratio.Measured += fmt.Sprintf("; PostgreSQL alone %.2f", db)
		}
		ratio.Met = r <= 2
	}
	idle := math.Max(res.IdleBefore.Service, res.IdleAfter.Service)
	ts = append(ts, ratio, target{
		Name:     "idle serve, the higher of before and after the steps",
		Measured: fmt.Sprintf("%.1f%% of a core", 100*idle),
		Goal:     "≤ 1%",
		Met:      idle <= 0.01,
	})
	if rss, at := res.peakRSSHeld(); rss > 0 {
		ts = append(ts, target{
			Name:     "serve's peak RSS over the steps that held",
			Measured: fmt.Sprintf("%.0f MB (at %.2f×)", rss, at),
			Goal:     fmt.Sprintf("≤ %d MB", rssGoalMB),
			Met:      rss <= rssGoalMB,
		})
	}
	return ts
}

// rssGoalMB bounds serve's resident set under steady load as the
// throughput scenario bounds it under saturation ("RSS ≤ 150 MB").
const rssGoalMB = 150

// peakRSSHeld is serve's highest peak RSS over the steps that held, and
// the load of that step; 0 for results files that did not measure it. A
// step that did not hold is left out: there ingest queues requests it
// cannot answer in time, and memory follows the queue.
func (res steadyResult) peakRSSHeld() (mb, load float64) {
	for _, s := range res.Steps {
		if s.Holds && s.RSSMB > mb {
			mb, load = s.RSSMB, s.Load
		}
	}
	return mb, load
}

// databaseRatio is PostgreSQL's CPU per transaction of pgbench held to a
// quarter of its rate ÷ at its full rate: the same work, so what the
// machine alone makes of moderate load. NaN when the run did not measure it
// (results files before 83996f3).
func (res steadyResult) databaseRatio() float64 {
	q, qc := res.PgbenchQuarter, res.PgbenchQuarterCPU
	if q == nil || qc == nil || q.Transactions == 0 || res.Pgbench.Transactions == 0 {
		return math.NaN()
	}
	return (qc.Postgres / float64(q.Transactions)) / (res.PgbenchCPU.Postgres / float64(res.Pgbench.Transactions))
}

// step returns the step at load, or nil.
func (res steadyResult) step(load float64) *steadyStep {
	for i := range res.Steps {
		if math.Abs(res.Steps[i].Load-load) < 1e-9 {
			return &res.Steps[i]
		}
	}
	return nil
}

// cpuPerRequest is the step's CPU, serve's and PostgreSQL's, in ms per
// request.
func (s steadyStep) cpuPerRequest() float64 {
	if s.Ingest.Requests == 0 {
		return math.NaN()
	}
	return 1000 * (s.CPU.Service + s.CPU.Postgres) / float64(s.Ingest.Requests)
}

func printSteadyTargets(w io.Writer, res steadyResult) {
	ts := append(steadyTargets(res), historyTargets(res)...)
	if ts == nil {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "steady-load target\tmeasured\tgoal\t\n")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Measured, t.Goal, verdict(t.Met))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// historyGoal bounds what a long history may cost: each step's figures
// with -steady-prefill's history ÷ the same step on the empty inbox.
const historyGoal = 1.1

// historyTargets compares the steps with history against the same steps
// on the empty inbox, run first in the same run; nil without a prefill.
// At a step that holds, processing keeps pace, so its speed shows as the
// ack→processed tail and as the highest step that holds.
func historyTargets(res steadyResult) []target {
	if len(res.FreshSteps) == 0 {
		return nil
	}
	var ts []target
	for _, f := range res.FreshSteps {
		h := res.step(f.Load)
		if h == nil || !f.Holds {
			continue
		}
		ack := float64(h.Ingest.Latency.P99) / float64(f.Ingest.Latency.P99)
		proc := float64(h.AckToProcessed.P99) / float64(f.AckToProcessed.P99)
		ts = append(ts, target{
			Name:     fmt.Sprintf("ack p99 at %.2f×, history ÷ empty", f.Load),
			Measured: fmt.Sprintf("%.2f (%s ÷ %s)", ack, h.Ingest.Latency.P99, f.Ingest.Latency.P99),
			Goal:     fmt.Sprintf("≤ %.1f", historyGoal),
			Met:      h.Holds && ack <= historyGoal,
		}, target{
			Name:     fmt.Sprintf("ack→processed p99 at %.2f×, history ÷ empty", f.Load),
			Measured: fmt.Sprintf("%.2f (%s ÷ %s)", proc, h.AckToProcessed.P99, f.AckToProcessed.P99),
			Goal:     fmt.Sprintf("≤ %.1f", historyGoal),
			Met:      h.Holds && proc <= historyGoal,
		})
	}
	return append(ts, target{
		Name:     "highest sustained step, history ÷ empty",
		Measured: fmt.Sprintf("%.2f× ÷ %.2f×", res.MaxSustained, res.FreshMaxSustained),
		Goal:     "the same",
		Met:      res.MaxSustained >= res.FreshMaxSustained-1e-9,
	})
}
