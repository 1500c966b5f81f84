package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPathCostPerForwardedDelivery divides a step's CPU, serve's and
// PostgreSQL's, by the deliveries the receiver got, and pgbench's client
// and PostgreSQL by its transactions: one trial run's figures.
func TestPathCostPerForwardedDelivery(t *testing.T) {
	t.Parallel()
	st := pathStep{Forwarded: 2025}
	st.CPU = cpuUse{Service: 2.341, Postgres: 3.471, Bench: 0.840}
	c := st.forwardedCost()
	require.InDelta(t, 1.156, c.ServeMs, 0.001)
	require.InDelta(t, 1.714, c.PostgresMs, 0.001)
	require.InDelta(t, 0.415, c.BenchMs, 0.001)
	require.InDelta(t, 2.870, c.machineMs(), 0.001, "the load generator is not the machine's cost of the path")

	pgbench := pgbenchResult{Transactions: 9064, ClientCPUSeconds: 1.323}
	ms := pgbenchTxMs(pgbench, cpuUse{Postgres: 8.384})
	require.InDelta(t, 1.071, ms, 0.001, "pgbench's client and PostgreSQL per transaction")
	require.InDelta(t, 2.68, st.ratioTo(ms), 0.01)

	require.Zero(t, st.ratioTo(0), "no pgbench, no ratio")
	require.Zero(t, pathStep{}.forwardedCost().machineMs(), "nothing forwarded, nothing to divide")
}

// TestParsePprofTop reads `go tool pprof -top` as Go 1.26 prints it.
func TestParsePprofTop(t *testing.T) {
	t.Parallel()
	const text = `File: hookinbox
Build ID: 5b7b55313497900ba5d903d208ddc7632ca82e26
Type: cpu
Time: 2026-12-07 18:43:48 UTC
Duration: 20s, Total samples = 14.08s (70.40%)
Showing nodes accounting for 1420ms, 10.08% of 14.08s total
Dropped 327 nodes (cum <= 70.40ms)
Showing top 3 nodes out of 268
      flat  flat%   sum%        cum   cum%
     750ms  5.33%  5.33%      750ms  5.33%  internal/runtime/syscall/linux.Syscall6
         0     0%  5.33%      1.10mins 98.00%  github.com/valyala/fasthttp.(*workerPool).getCh.func1
      50ms  0.36%  5.68%      2.12s 15.06%  github.com/hookinbox/hookinbox/ingest.(*batcher).run
`
	total, funcs, err := parsePprofTop(text)
	require.NoError(t, err)
	require.InDelta(t, 14.08, total, 1e-9)
	require.Equal(t, []profileFunc{
		{Name: "internal/runtime/syscall/linux.Syscall6", FlatS: 0.75, CumS: 0.75},
		{Name: "github.com/valyala/fasthttp.(*workerPool).getCh.func1", FlatS: 0, CumS: 66},
		{Name: "github.com/hookinbox/hookinbox/ingest.(*batcher).run", FlatS: 0.05, CumS: 2.12},
	}, roundFuncs(funcs))

	_, _, err = parsePprofTop("no profile here")
	require.Error(t, err)
	_, err = pprofSeconds("3parsecs")
	require.Error(t, err)
}

func roundFuncs(funcs []profileFunc) []profileFunc {
	for i := range funcs {
		funcs[i].FlatS = float64(int(funcs[i].FlatS*1e6+0.5)) / 1e6
		funcs[i].CumS = float64(int(funcs[i].CumS*1e6+0.5)) / 1e6
	}
	return funcs
}

// TestPathLoadFlag takes the steps as a list and keeps the default
// without the flag.
func TestPathLoadFlag(t *testing.T) {
	t.Parallel()
	o, err := parseOptions([]string{"-scenario", "path"})
	require.NoError(t, err)
	require.Equal(t, []float64{0.25, 0.5}, o.pathLoads)
	o, err = parseOptions([]string{"-scenario", "path", "-path-load", "0.25, 0.75"})
	require.NoError(t, err)
	require.Equal(t, []float64{0.25, 0.75}, o.pathLoads)
	for _, bad := range []string{"", "0", "-0.5", "0.25,,0.5", "half"} {
		_, err = parseOptions([]string{"-path-load", bad})
		require.Error(t, err, "%q", bad)
	}
}

// TestProfileStages reads `go tool pprof -traces` and puts each sample in
// the first stage whose function its stack holds, and in every part of
// it that its stack holds.
func TestProfileStages(t *testing.T) {
	t.Parallel()
	const text = `File: hookinbox
Type: cpu
Duration: 20s, Total samples = 5.90s (29.50%)
-----------+-------------------------------------------------------
      70ms   internal/runtime/syscall/linux.Syscall6
             runtime.netpoll
             runtime.mcall
-----------+-------------------------------------------------------
      10ms   runtime.memmove
             runtime.mallocgc
             github.com/hookinbox/hookinbox/verify.VerifyRequest (inline)
             github.com/valyala/fasthttp.(*Server).serveConn
-----------+-------------------------------------------------------
      1.20s  crypto/sha256.block
             github.com/riverqueue/river.(*Client[go.shape.2410186da098]).InsertManyTx
             github.com/hookinbox/hookinbox/ingest.(*batcher).run
-----------+-------------------------------------------------------
      20ms   github.com/riverqueue/river.(*producer).dispatchWork
-----------+-------------------------------------------------------
      30ms   github.com/riverqueue/river/internal/jobexecutor.(*JobExecutor).execute
             github.com/hookinbox/hookinbox/jobs.(*processBatcher).run
-----------+-------------------------------------------------------
      40ms   main.elsewhere
`
	samples, err := parsePprofTraces(text)
	require.NoError(t, err)
	require.Len(t, samples, 6)
	require.Equal(t, []string{"runtime.memmove", "runtime.mallocgc", "github.com/hookinbox/hookinbox/verify.VerifyRequest",
		"github.com/valyala/fasthttp.(*Server).serveConn"}, samples[1].frames)

	got := map[string]float64{}
	for _, s := range attributeStages(samples, pathStages) {
		got[s.Name] = float64(int(s.Seconds*1000+0.5)) / 1000
	}
	require.Equal(t, 0.010, got["ingest: requests (read, verify, answer)"])
	require.Equal(t, 0.010, got["verify the signature"])
	require.Equal(t, 0.010, got["allocation (in every stage)"])
	require.Equal(t, 1.2, got["ingest: batch commits"])
	require.Equal(t, 1.2, got["River's job insert, carrying the COMMIT"])
	require.Equal(t, 0.020, got["River: fetch, completion, notifications"], "River's own work, not the hookinbox work it runs")
	require.Equal(t, 0.030, got["processing batches"])
	require.Equal(t, 0.070, got["scheduler, netpoll, timers"])
	require.Equal(t, 0.040, got["other"])
}
