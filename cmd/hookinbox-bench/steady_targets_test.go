package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSteadyTargets(t *testing.T) {
	t.Parallel()
	step := func(load float64, ackP99, processedP99 time.Duration, cpuS float64, holds bool) steadyStep {
		s := steadyStep{Load: load, Holds: holds, CPU: cpuUse{Service: cpuS / 2, Postgres: cpuS / 2}}
		s.Ingest.Requests = 1000
		s.Ingest.Latency.P99 = duration(ackP99)
		s.AckToProcessed.P99 = duration(processedP99)
		return s
	}
	res := steadyResult{Base: 2000, MaxSustained: 0.75, Steps: []steadyStep{
		step(0.25, 10*time.Millisecond, 50*time.Millisecond, 1.5, true), // 1.5 ms/req
		step(0.5, 30*time.Millisecond, 90*time.Millisecond, 1.0, true),
		step(0.75, 40*time.Millisecond, 200*time.Millisecond, 0.7, true), // 0.7 ms/req
		step(1, time.Second, time.Second, 0.6, false),
	}}
	res.Pgbench.TPS = 2000
	res.IdleBefore.Service, res.IdleAfter.Service = 0.004, 0.012

	met := map[string]bool{}
	for _, tg := range steadyTargets(res) {
		met[tg.Name] = tg.Met
	}
	require.Equal(t, map[string]bool{
		"highest sustained step ÷ pgbench tps":                 false, // 0.75×
		"ack p99 at 0.5×":                                      false, // 30 ms
		"ack→processed p99 at 0.5×":                            true,
		"CPU ms/req at 0.25× ÷ at the highest sustained step":  false, // 1.5 ÷ 0.7
		"idle serve, the higher of before and after the steps": false, // 1.2%
	}, met)

	res.MaxSustained, res.Steps[3].Holds = 1, true
	res.Steps[1].Ingest.Latency.P99 = duration(20 * time.Millisecond)
	res.Steps[3].CPU = cpuUse{Service: 0.4, Postgres: 0.4} // 0.8 ms/req
	res.IdleAfter.Service = 0.006
	for _, tg := range steadyTargets(res) {
		require.True(t, tg.Met, "%s: %s against %s", tg.Name, tg.Measured, tg.Goal)
	}

	rssTarget := func() *target {
		for _, tg := range steadyTargets(res) {
			if tg.Name == "serve's peak RSS over the steps that held" {
				return &tg
			}
		}
		return nil
	}
	require.Nil(t, rssTarget(), "not measured (older results): not shown")
	res.Steps[0].RSSMB, res.Steps[1].RSSMB, res.Steps[2].RSSMB, res.Steps[3].RSSMB = 60, 75, 70, 140
	require.True(t, rssTarget().Met)
	require.Equal(t, "140 MB (at 1.00×)", rssTarget().Measured)
	res.Steps[1].RSSMB = 160
	require.False(t, rssTarget().Met)
	res.Steps[1].RSSMB, res.Steps[3].Holds = 75, false
	res.Steps[3].RSSMB = 400
	require.Equal(t, "75 MB (at 0.50×)", rssTarget().Measured, "a step that did not hold is left out")
	res.Steps[3].Holds = true

	ratioOf := func() string {
		for _, tg := range steadyTargets(res) {
			if tg.Name == "CPU ms/req at 0.25× ÷ at the highest sustained step" {
				return tg.Measured
			}
		}
		return ""
	}
	require.NotContains(t, ratioOf(), "PostgreSQL alone", "not measured: not shown")
	res.Pgbench.Transactions, res.PgbenchCPU.Postgres = 40000, 36 // 0.9 ms/tx
	res.PgbenchQuarter = &pgbenchResult{TPS: 500, Transactions: 10000}
	res.PgbenchQuarterCPU = &cpuUse{Postgres: 15} // 1.5 ms/tx
	require.Contains(t, ratioOf(), "; PostgreSQL alone 1.67")

	res.Base = 3000 // -steady-base: the loads are not fractions of pgbench's rate
	require.Nil(t, steadyTargets(res))
}

// The table's heading names the goal it checks, as the other scenarios'
// tables do.
func TestPrintSteadyTargetsHeading(t *testing.T) {
	t.Parallel()
	res := steadyResult{Base: 2000, MaxSustained: 0.5, Steps: []steadyStep{{Load: 0.25, Holds: true}, {Load: 0.5, Holds: true}}}
	res.Pgbench.TPS = 2000

	var out bytes.Buffer
	printSteadyTargets(&out, res)
	require.Contains(t, out.String(), "steady-load target")
	require.Contains(t, out.String(), "highest sustained step")
	require.NotContains(t, strings.ToLower(out.String()), "issue")
}

// A run with history compares each step with the same step on the empty
// inbox, and a step slower by more than the goal's share misses it.
func TestHistoryTargets(t *testing.T) {
	t.Parallel()
	step := func(load float64, ack, proc time.Duration) steadyStep {
		s := steadyStep{Load: load, Holds: true}
		s.Ingest.Latency.P99, s.AckToProcessed.P99 = duration(ack), duration(proc)
		return s
	}
	res := steadyResult{MaxSustained: 1, FreshMaxSustained: 1,
		FreshSteps: []steadyStep{step(0.5, 10*time.Millisecond, 50*time.Millisecond), step(1, 20*time.Millisecond, 100*time.Millisecond)},
		Steps:      []steadyStep{step(0.5, 10500*time.Microsecond, 52*time.Millisecond), step(1, 25*time.Millisecond, 100*time.Millisecond)}}
	require.Nil(t, historyTargets(steadyResult{Steps: res.Steps}))

	ts := historyTargets(res)
	require.Len(t, ts, 5)
	met := func(i int) bool { return ts[i].Met }
	require.True(t, met(0), ts[0].Measured)  // ack at 0.5×: 1.05
	require.True(t, met(1), ts[1].Measured)  // processed at 0.5×: 1.04
	require.False(t, met(2), ts[2].Measured) // ack at 1×: 1.25
	require.True(t, met(3), ts[3].Measured)
	require.True(t, met(4), ts[4].Measured)

	res.MaxSustained, res.Steps[1].Holds = 0.5, false
	ts = historyTargets(res)
	require.False(t, ts[3].Met, "a step that no longer holds")
	require.False(t, ts[4].Met, "a lower highest step")
}
