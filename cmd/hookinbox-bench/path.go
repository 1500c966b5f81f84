package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The path scenario (bench/README.md, "The whole path"): the machine's
// CPU per forwarded delivery, each signed GitHub `issues` delivery
// verified, recorded, processed by the shipped handlers and sent on one
// unordered route to a receiver in the bench process, against the
// machine's CPU per pgbench one-delivery transaction in the same run. Each
// step is an open loop at a fraction of pgbench's tps on one default
// serve, measured until every delivery was sent, with a CPU profile of
// serve over the load and the database's statements (pg_stat_statements,
// always on here: both sides of the ratio pay for it).

// pathWarmup is how long the load runs, at the first step's rate, before
// the first step. Each step starts on tables vacuumed and analyzed
// (destRunPhase): on a fresh install, empty ones, and plans made from
// empty tables' statistics read every send so far (bench/README.md,
// Kafka: the relay's first seconds); the first step's claims cost up to
// several times the next step's. A warm-up leaves the statistics of
// tables in use, as a running inbox has.
const pathWarmup = 10 * time.Second

// pathGoal is the most machine CPU a forwarded delivery may take, in
// pgbench one-delivery transactions.
const pathGoal = 1.5

type pathResult struct {
	runInfo
	// pgbenchBase is pgbench at full rate: the rate the steps are
	// fractions of, and the transaction the goal's ratio divides by.
	pgbenchBase
	Steps []pathStep `json:"steps"`
}

// pathStep is one open loop at Load × pgbench's tps.
type pathStep struct {
	Load float64 `json:"load"`
	Rate float64 `json:"rate_per_sec"`
	// PgbenchAtRate is the same transaction held to Rate, on a database
	// of its own, just before the step: pgbench's CPU per transaction at
	// the step's rate rather than flat out.
	PgbenchAtRate    pgbenchResult `json:"pgbench_at_rate"`
	PgbenchAtRateCPU cpuUse        `json:"pgbench_at_rate_cpu"`
	destPhase
	// Forwarded is the receiver's requests from the load's start until
	// every delivery was sent: the deliveries the step's CPU paid for.
	Forwarded int64 `json:"forwarded"`
	// Profile is serve's CPU profile over the load, and ProfileTop its
	// heaviest functions.
	Profile    string      `json:"profile,omitempty"`
	ProfileTop *profileTop `json:"profile_top,omitempty"`
	// ProfileStages is the profile by stage of the path (pathStages).
	ProfileStages []profileStage `json:"profile_stages,omitempty"`
}

func runPath(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	opts.pgStats = true
	res := pathResult{runInfo: newRunInfo(ctx, opts, root, progress)}
	out := resultsPath(opts, root, res.Started, "path")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil { // the profiles go beside it
		return err
	}
	r, issues, recv, err := setupReceiverRig(ctx, opts, root, progress, &res.runInfo, &res.pgbenchBase)
	if err != nil {
		return err
	}
	defer r.close()
	progress("starting hookinbox serve (role all, the defaults) with one unordered route to the receiver")
	svc, err := r.startWith(ctx, serviceOptions{Role: "all", Name: "path",
		Extra: fmt.Sprintf(destConfig, destName, recv.url, destSecret, opts.destInFlight, 0.0, destName, false)})
	if err != nil {
		return err
	}
	defer svc.stop()
	gen := newGenerator(svc.webhookURL, "issues", issues, opts.concurrency, opts.dupShare)
	defer gen.close()
	if err := pathWarm(ctx, r, gen, opts.pathLoads[0]*res.Pgbench.TPS, progress); err != nil {
		return err
	}
	for _, load := range opts.pathLoads {
		st, err := pathRunStep(ctx, r, svc, gen, recv, load, res.Pgbench.TPS, out, progress)
		if err != nil {
			return err
		}
		res.Steps = append(res.Steps, st)
	}
	if err := svc.stop(); err != nil {
		progress("warning: %v", err)
	}
	res.finish()
	printPath(os.Stdout, res)
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// pathWarm runs the load at rate for pathWarmup and waits until its
// deliveries are processed and sent.
func pathWarm(ctx context.Context, r *rig, gen *generator, rate float64, progress func(string, ...any)) error {
	progress("warm-up: open loop at %.0f/s for %s", rate, pathWarmup)
	if l := gen.openLoop(ctx, rate, pathWarmup); l.Errors > 0 {
		progress("warning: %d errors in the warm-up", l.Errors)
	}
	done, err := waitWorkedOff(ctx, r.db, true)
	if err == nil && !done {
		err = fmt.Errorf("the warm-up's deliveries still unsent %s after it", sendsLimit)
	}
	return err
}

// pathRunStep holds pgbench to the step's rate, then runs the step's
// open loop on svc until every delivery was sent, profiling serve over
// the load.
func pathRunStep(ctx context.Context, r *rig, svc *service, gen *generator, recv *receiver, load, tps float64,
	out string, progress func(string, ...any)) (pathStep, error) {
	st := pathStep{Load: load, Rate: load * tps}
	d := r.opts.duration
	progress("step %.2f×: pgbench held to %.0f tps for %s", load, st.Rate, d)
	var err error
	if st.PgbenchAtRate, st.PgbenchAtRateCPU, err = r.pgbench(ctx, st.Rate, d, progress); err != nil {
		return st, err
	}
	path := fmt.Sprintf("%s-%.2f.pprof", strings.TrimSuffix(out, ".json"), load)
	profiled := func() (string, error) { return "", nil }
	loading := func() { profiled = profileAsync(ctx, svc, r.opts.profile, d, path) }
	progress("step %.2f×: open loop at %.0f/s, %d connections, %s", load, st.Rate, gen.conns, d)
	if st.destPhase, err = destRunPhase(ctx, r, svc, gen, recv, st.Rate, loading, progress); err != nil {
		return st, err
	}
	st.Forwarded = recv.requests.Load()
	if st.Profile, err = profiled(); err != nil {
		progress("warning: %v", err)
	} else if st.Profile != "" {
		if st.ProfileTop, err = readProfileTop(ctx, st.Profile, profileTopN); err != nil {
			progress("warning: %v", err)
		}
		if st.ProfileStages, err = readProfileStages(ctx, st.Profile, pathStages); err != nil {
			progress("warning: %v", err)
		}
	}
	c := st.forwardedCost()
	progress("step %.2f×: %.0f answered/s, %.0f sent/s; serve %.3f + PostgreSQL %.3f ms per forwarded delivery, %.2f× pgbench's transaction",
		load, st.Ingest.RequestsPerSec, st.SentPerSec, c.ServeMs, c.PostgresMs, c.machineMs()/pgbenchTxMs(st.PgbenchAtRate, st.PgbenchAtRateCPU))
	return st, nil
}

// pathCost is CPU ms per unit of work, by process.
type pathCost struct {
	ServeMs    float64
	PostgresMs float64
	// BenchMs is the bench process's: the load generator and the
	// receiver.
	BenchMs float64
}

// machineMs is serve's and PostgreSQL's: the goal's machine CPU, without
// the load generator standing in for the providers.
func (c pathCost) machineMs() float64 { return c.ServeMs + c.PostgresMs }

// forwardedCost is the step's CPU, from the load's start until every
// delivery was sent, per forwarded delivery. The duplicates' requests
// (-dup-share) are part of it: a provider's retries are part of the path.
func (st pathStep) forwardedCost() pathCost {
	n := st.Forwarded
	return pathCost{ServeMs: perRequestMs(st.CPU.Service, n), PostgresMs: perRequestMs(st.CPU.Postgres, n),
		BenchMs: perRequestMs(st.CPU.Bench, n)}
}

// pgbenchTxMs is the machine's CPU per pgbench transaction: its client's
// and PostgreSQL's, 0 without transactions.
func pgbenchTxMs(p pgbenchResult, u cpuUse) float64 {
	return perRequestMs(p.ClientCPUSeconds+u.Postgres, p.Transactions)
}

// ratioTo is a step's machine CPU per forwarded delivery over pgbench's
// per transaction, 0 when pgbench's is unknown.
func (st pathStep) ratioTo(pgbenchMs float64) float64 {
	if pgbenchMs <= 0 {
		return 0
	}
	return st.forwardedCost().machineMs() / pgbenchMs
}
