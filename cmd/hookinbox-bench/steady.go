package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The steady scenario (bench/README.md, "Steady load, one default
// serve"): one `hookinbox serve` with the defaults, ingest and processing
// in one process as a user runs it, under open-loop GitHub `issues`
// traffic that the shipped issue mirror upserts. The load steps up by
// fractions of pgbench's one-delivery rate until a step does not hold.

// backlogGrace is how long after a step its backlog is read: processing
// keeps pace when what is left then is under a second of the step's
// traffic.
const backlogGrace = 5 * time.Second

// idleWindow is how long the idle service's CPU is measured. An idle
// serve uses about 10 ms of CPU a second and /proc counts in 10 ms ticks,
// while River's timers and polls come every 50 ms to 5 s: over 10 s, one
// tick or one poll more moved the reading by 0.1%.
const idleWindow = 30 * time.Second

// idleSettle is how long the service is left alone before idleWindow,
// after the checkpoint. What the start or the last step left to finish
// runs first: River's leader takes office and makes its first maintenance
// passes, serve collects the load's garbage on its first quiet 5 s
// (loadRelease), and fasthttp stops its idle workers every 10 s.
const idleSettle = 15 * time.Second

// steadyResult is the -scenario steady report.
type steadyResult struct {
	runInfo
	Pgbench    pgbenchResult `json:"pgbench"`
	PgbenchCPU cpuUse        `json:"pgbench_cpu"`
	// PgbenchQuarter is the same transaction held to a quarter of
	// Pgbench's rate: what PostgreSQL alone pays per transaction at 0.25×
	// against at its full rate, the floor under the CPU ratio goal.
	PgbenchQuarter    *pgbenchResult `json:"pgbench_quarter,omitempty"`
	PgbenchQuarterCPU *cpuUse        `json:"pgbench_quarter_cpu,omitempty"`
	// IdleBefore is the service with nothing to do before the first
	// step; IdleAfter after the last one's backlog was worked off.
	IdleBefore idleUse      `json:"idle_before"`
	IdleAfter  idleUse      `json:"idle_after"`
	Steps      []steadyStep `json:"steps"`
	// MaxSustained is the highest load (a fraction of Base) of a step that
	// held; 0 when none did.
	MaxSustained float64 `json:"max_sustained_load"`
	// Base is the rate the loads are fractions of: pgbench's tps, or
	// -steady-base.
	Base float64 `json:"base_rate"`
	// PrefillRows deliveries of history were written before the steps
	// (-steady-prefill), in PrefillSeconds.
	PrefillRows    int     `json:"prefill_rows,omitempty"`
	PrefillSeconds float64 `json:"prefill_seconds,omitempty"`
	// PrefillAged: the history's keys were in an older key generation
	// than the steps' (-steady-prefill-aged).
	PrefillAged bool `json:"prefill_aged,omitempty"`
	// FreshSteps are the same steps on the empty inbox, run before the
	// prefill, and FreshMaxSustained their highest held load.
	FreshSteps        []steadyStep `json:"fresh_steps,omitempty"`
	FreshMaxSustained float64      `json:"fresh_max_sustained_load,omitempty"`
}

// steadyStep is one step: open-loop traffic at Load × pgbench's tps.
type steadyStep struct {
	Load float64 `json:"load"`
	// Warmup is the step's load before it is measured (-steady-warmup):
	// the same rate, right after the step's CHECKPOINT.
	Warmup *loadResult `json:"warmup,omitempty"`
	Ingest loadResult  `json:"ingest"`
	// Backlog is the rows still `received` backlogGrace after the step.
	Backlog int64 `json:"backlog_after_grace"`
	// AckToProcessed is over the step's inbox rows, read once processing
	// worked them off (or gave up waiting: a row not processed by then
	// counts as processed at the reading).
	AckToProcessed rowLatencies `json:"ack_to_processed"`
	Unprocessed    int64        `json:"unprocessed_when_read"`
	// WithError is the step's rows whose processing failed at least once.
	WithError int64 `json:"rows_with_error"`
	// Statements are the database's top statements from the step's start
	// until its rows were processed (-pg-stats).
	Statements []statementStat `json:"statements,omitempty"`
	// CPU is from the step's start to the backlog's reading.
	CPU cpuUse `json:"cpu"`
	// RSSMB is serve's peak resident set over the step, from its warm-up
	// until its rows were processed (VmRSS every 100 ms). Zero in older
	// results files.
	RSSMB float64 `json:"serve_rss_mb,omitempty"`
	// WAL is what the server wrote to its WAL over the same span as CPU
	// (every database, the service's and the bench's own reads).
	WAL walUse `json:"wal"`
	// PGSamples are the server's counters every -pg-sample over the step's
	// open loop.
	PGSamples []pgSample `json:"pg_samples,omitempty"`
	Holds     bool       `json:"holds"`
	WhyNot    string     `json:"why_not,omitempty"`
	Profile   string     `json:"profile,omitempty"`
}

// idleUse is a service's CPU with nothing to do, in shares of one core.
type idleUse struct {
	Seconds  float64 `json:"seconds"`
	Service  float64 `json:"hookinbox_core_share"`
	Postgres float64 `json:"postgres_core_share"`
}

func runSteady(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := steadyResult{runInfo: newRunInfo(ctx, opts, root, progress)}
	// A run with history is kept apart from the plain steps' run.
	out := resultsPath(opts, root, res.Started, "steady")
	if opts.steadyPrefill > 0 {
		out = resultsPath(opts, root, res.Started, "history")
	}
	r, issues, err := setupIssueRig(ctx, opts, root, progress, &res.runInfo)
	if err != nil {
		return err
	}
	defer r.close()
	if res.Pgbench, res.PgbenchCPU, err = r.pgbenchBaseline(ctx, progress); err != nil {
		return err
	}
	progress("pgbench held to %.0f tps (0.25×) for %s", res.Pgbench.TPS/4, r.opts.duration)
	quarter, quarterCPU, err := r.pgbench(ctx, res.Pgbench.TPS/4, r.opts.duration, progress)
	if err != nil {
		return err
	}
	res.PgbenchQuarter, res.PgbenchQuarterCPU = &quarter, &quarterCPU

	progress("starting hookinbox serve (role all, the defaults)")
	svc, err := r.start(ctx, "all")
	if err != nil {
		return err
	}
	defer svc.stop()
	meter := cpuMeter{servicePID: svc.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}
	if res.IdleBefore, err = idle(ctx, r, meter, progress); err != nil {
		return err
	}

	gen := newGenerator(svc.webhookURL, "issues", issues, opts.steadyConns, opts.dupShare)
	defer gen.close()
	res.Base = res.Pgbench.TPS
	if opts.steadyBase > 0 {
		res.Base = opts.steadyBase
	}
	// out names the steps' profiles too.
	steps := func(out string) ([]steadyStep, float64, error) {
		return steadySteps(ctx, r, svc, gen, meter, res.Base, out, progress)
	}
	if opts.steadyPrefill > 0 {
		// The same steps on the empty inbox first: the history's cost is
		// their ratio, in one run on one machine.
		if res.FreshSteps, res.FreshMaxSustained, err = steps(strings.TrimSuffix(out, ".json") + "-fresh.json"); err != nil {
			return err
		}
		if res.PrefillSeconds, err = prefill(ctx, r.db, "issues", issues, opts.steadyPrefill, progress); err != nil {
			return err
		}
		res.PrefillRows = opts.steadyPrefill
		if opts.steadyPrefillAged {
			progress("prefill: opening a key generation past the history")
			if err := openKeyGeneration(ctx, r.db); err != nil {
				return err
			}
			res.PrefillAged = true
		}
	}
	if res.Steps, res.MaxSustained, err = steps(out); err != nil {
		return err
	}
	if res.IdleAfter, err = idle(ctx, r, meter, progress); err != nil {
		return err
	}

	res.finish()
	printSteady(os.Stdout, res)
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// steadySteps steps the load up by -steady-step until a step does not
// hold or -steady-max is reached, and returns the steps and the highest
// load that held.
func steadySteps(ctx context.Context, r *rig, svc *service, gen *generator, meter cpuMeter,
	base float64, out string, progress func(string, ...any)) ([]steadyStep, float64, error) {
	var steps []steadyStep
	var sustained float64
	for i := 1; float64(i)*r.opts.steadyStep <= r.opts.steadyMax+1e-9; i++ {
		load := float64(i) * r.opts.steadyStep
		st, err := steadyRunStep(ctx, r, svc, gen, meter, load, base, out, progress)
		if err != nil {
			return steps, sustained, err
		}
		steps = append(steps, st)
		if !st.Holds {
			break
		}
		sustained = load
	}
	return steps, sustained, nil
}

// steadyRunStep runs one step at load × pgbenchTPS requests per second.
func steadyRunStep(ctx context.Context, r *rig, svc *service, gen *generator, meter cpuMeter,
	load, pgbenchTPS float64, out string, progress func(string, ...any)) (steadyStep, error) {
	st := steadyStep{Load: load}
	d, db := cmp.Or(r.opts.steadyDur, r.opts.duration), r.db
	rate := load * pgbenchTPS
	r.settle(ctx, progress)
	svc.rss.reset()
	if w := r.opts.steadyWarm; w > 0 {
		// The first seconds after a checkpoint log whole pages on every
		// first write, and the commits slow down: ack p99 at 1,000/s went
		// from about 20 ms to 170 ms for the 2.5 s that took. A checkpoint
		// comes every 5 minutes (checkpoint_timeout), spread over most of
		// them, not at the start of every 20 s: measured from the start,
		// an eighth of a step would be that moment. So the load runs
		// first, and its latencies are reported apart.
		progress("step %.2f× pgbench: warm-up at %.0f/s for %s", load, rate, w)
		warm := gen.openLoop(ctx, rate, w)
		st.Warmup = &warm
	}
	from, err := maxInboxID(ctx, db)
	if err != nil {
		return st, err
	}
	progress("step %.2f× pgbench: open loop at %.0f/s, %d connections, %s", load, rate, gen.conns, d)
	profiled := make(chan error, 1)
	if r.opts.profile {
		st.Profile = strings.TrimSuffix(out, ".json") + fmt.Sprintf("-%.2f.pprof", load)
		go func() {
			time.Sleep(time.Second)
			profiled <- svc.cpuProfile(ctx, d-2*time.Second, st.Profile)
		}()
	} else {
		profiled <- nil
	}
	stats := statementStats{enabled: r.opts.pgStats, db: db}
	stats.reset(ctx)
	walEnd := walSpan(ctx, db, progress)
	end := meter.span(ctx, r.pg, r.svcURL)
	sampled := sampleDuring(ctx, db, r.opts.pgSample, progress)
	st.Ingest = gen.openLoop(ctx, rate, d)
	stopped := time.Now()
	st.PGSamples = sampled()
	to, err := maxInboxID(ctx, db)
	if err != nil {
		return st, err
	}
	select {
	case <-ctx.Done():
		return st, ctx.Err()
	case <-time.After(time.Until(stopped.Add(backlogGrace))):
	}
	if st.Backlog, err = countReceived(ctx, db); err != nil {
		return st, err
	}
	st.CPU = end()
	st.WAL = walEnd()
	if err := <-profiled; err != nil {
		progress("warning: %v", err)
		st.Profile = ""
	}

	// The next step starts on an empty backlog, and the latencies count
	// every row of this one.
	if _, err := waitDrained(ctx, db, drainLimit(2*d)); err != nil {
		return st, err
	}
	st.RSSMB = svc.rss.peakMB()
	st.Statements = stats.read(ctx)
	if st.AckToProcessed, err = readRowLatencies(ctx, db, ackToProcessed, from, to); err != nil {
		return st, err
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'received'),
			count(*) FILTER (WHERE last_error IS NOT NULL OR status = 'failed')
			FROM delivery WHERE id > $1 AND id <= $2`, from, to).Scan(&st.Unprocessed, &st.WithError); err != nil {
		return st, err
	}

	planned := int64(rate * d.Seconds())
	perSecond := st.Ingest.AcceptedPerSec
	switch {
	case st.Warmup != nil && st.Warmup.Errors > 0:
		st.WhyNot = fmt.Sprintf("%d errors in the warm-up: %s", st.Warmup.Errors, strings.Join(errorSummary(st.Warmup.ErrorKinds), "; "))
	case st.Ingest.Errors > 0:
		st.WhyNot = fmt.Sprintf("%d errors: %s", st.Ingest.Errors, strings.Join(errorSummary(st.Ingest.ErrorKinds), "; "))
	case st.Ingest.Requests < planned:
		st.WhyNot = fmt.Sprintf("%d of %d requests made", st.Ingest.Requests, planned)
	case st.Ingest.Seconds > (d + time.Second).Seconds():
		st.WhyNot = fmt.Sprintf("the last answer came %.1fs after the step's end: ingest fell behind", st.Ingest.Seconds-d.Seconds())
	case float64(st.Backlog) >= perSecond:
		st.WhyNot = fmt.Sprintf("%d rows still received %s after the step, %.1fs of its traffic: processing fell behind",
			st.Backlog, backlogGrace, float64(st.Backlog)/perSecond)
	case st.WithError > 0:
		st.WhyNot = fmt.Sprintf("%d rows whose processing failed", st.WithError)
	default:
		st.Holds = true
	}
	verdict := "holds"
	if !st.Holds {
		verdict = "does not hold: " + st.WhyNot
	}
	progress("step %.2f×: %.0f answered/s, ack p99 %s, processed p99 %s, backlog %d: %s",
		load, st.Ingest.RequestsPerSec, st.Ingest.Latency.P99, st.AckToProcessed.P99, st.Backlog, verdict)
	return st, nil
}

// idle measures the service's CPU with nothing to do, after a checkpoint
// and idleSettle for what the last work left behind.
func idle(ctx context.Context, r *rig, meter cpuMeter, progress func(string, ...any)) (idleUse, error) {
	r.settle(ctx, progress)
	progress("idle: %s with nothing to do", idleWindow)
	select {
	case <-ctx.Done():
		return idleUse{}, ctx.Err()
	case <-time.After(idleSettle):
	}
	end := meter.span(ctx, r.pg)
	select {
	case <-ctx.Done():
		return idleUse{}, ctx.Err()
	case <-time.After(idleWindow):
	}
	u := end()
	return idleUse{Seconds: u.Seconds, Service: u.Service / u.Seconds, Postgres: u.Postgres / u.Seconds}, nil
}

func printSteady(w io.Writer, res steadyResult) {
	printHeader(w, "steady load, one default serve", res.runInfo)
	fmt.Fprintf(w, "traffic   GitHub issues (%d issues in %d repositories, payloads %v–%v B), %.0f%% duplicates, open loop, %v connections, %v steps\n",
		issueCount, issueRepos, res.Options["payload_min"], res.Options["payload_max"], 100*res.Options["dup_share"].(float64),
		res.Options["steady_connections"], res.Options["duration"])
	fmt.Fprintf(w, "pgbench   %.0f tps (one delivery's transaction, %d clients, %ds; %s)\n",
		res.Pgbench.TPS, res.Pgbench.Clients, res.Pgbench.Seconds, pgbenchOther(res.Pgbench, res.PgbenchCPU))
	if db := res.databaseRatio(); !math.IsNaN(db) {
		full := 1000 * res.PgbenchCPU.Postgres / float64(res.Pgbench.Transactions)
		fmt.Fprintf(w, "          held to %.0f tps (0.25×): postgres %.3f ms of CPU per transaction against %.3f at full rate, %.2f× (the database's own ratio)\n",
			res.PgbenchQuarter.TPS, db*full, full, db)
	}
	if res.Options["job_per_batch"] == false {
		fmt.Fprintf(w, "jobs      one processing job per delivery (-job-per-batch=false: ingest.job_per_batch off)\n")
	}
	if res.PrefillRows > 0 {
		fmt.Fprintf(w, "history   %d deliveries written before the steps (-steady-prefill: outcome and completed River job each, 1 ms apart; %.0fs)\n",
			res.PrefillRows, res.PrefillSeconds)
		if res.PrefillAged {
			fmt.Fprintf(w, "          its keys in an older key generation than the steps' (-steady-prefill-aged): each delivery's look-up probes both\n")
		}
	}
	if res.Base != res.Pgbench.TPS {
		fmt.Fprintf(w, "base      %.0f requests/s (-steady-base): the loads below are fractions of it, not of pgbench's tps\n", res.Base)
	}
	fmt.Fprintf(w, "idle      hookinbox %.1f%% of a core, postgres %.1f%% before the steps; %.1f%% and %.1f%% after (%s each)\n\n",
		100*res.IdleBefore.Service, 100*res.IdleBefore.Postgres, 100*res.IdleAfter.Service, 100*res.IdleAfter.Postgres, idleWindow)

	if len(res.FreshSteps) > 0 {
		fmt.Fprintln(w, "on the empty inbox, before the prefill")
		printStepTable(w, res.FreshSteps)
		fmt.Fprintf(w, "\nwith %d deliveries of history\n", res.PrefillRows)
	}
	printStepTable(w, res.Steps)
	fmt.Fprintln(w, "  warm-up p99: ack p99 of the step's load before it is measured (-steady-warmup), right after the step's CHECKPOINT;")
	fmt.Fprintln(w, "  answered/s: requests over the step's time until its last answer; ack: from each request's due time;")
	fmt.Fprintln(w, "  in worst s: of the acks at or above the step's p99, how many were due in its worst second, and when; p99 without: of the other seconds' acks")
	fmt.Fprintln(w, "  →processed: processed_at − received_at of the step's rows; ms/req: CPU from the step's start to the backlog reading, per request;")
	fmt.Fprintln(w, "  WAL kB/req, FPI/req: WAL the server wrote over the same span, and the full-page images in it (pg_stat_wal)")
	fmt.Fprintln(w, "  busy: the machine's CPUs; other: cores used by processes outside the run (another tenant's build or tests)")
	fmt.Fprintln(w, "  procs: processes and threads started on the machine over the same span (autovacuum workers, anything run beside the bench)")
	fmt.Fprintln(w, "  RSS MB: serve's peak resident set over the step, from its warm-up until its rows were processed")
	for _, s := range res.Steps {
		if !s.Holds {
			fmt.Fprintf(w, "  %.2f× does not hold: %s\n", s.Load, s.WhyNot)
		}
	}
	for _, s := range res.Steps {
		if line := slowSeconds(s); line != "" {
			fmt.Fprintf(w, "  %.2f× %s\n", s.Load, line)
		}
	}
	for _, s := range res.Steps {
		if len(s.PGSamples) > 0 {
			fmt.Fprintf(w, "server counters, step %.2f× (-pg-sample)\n", s.Load)
			printPGSamples(w, s.PGSamples)
		}
	}
	for _, s := range res.Steps {
		printStatementTable(w, fmt.Sprintf("step %.2f×, until its rows were processed", s.Load), s.Statements)
	}
	if res.MaxSustained > 0 {
		fmt.Fprintf(w, "\nhighest sustained step: %.2f× pgbench (%.0f requests/s of %.0f tps)\n", res.MaxSustained*res.Base/res.Pgbench.TPS,
			res.MaxSustained*res.Base, res.Pgbench.TPS)
	} else {
		fmt.Fprintln(w, "\nno step held")
	}
	printSteadyTargets(w, res)
	for _, s := range res.Steps {
		if s.Profile != "" {
			fmt.Fprintf(w, "CPU profile of serve at %.2f×: go tool pprof -top %s\n", s.Load, s.Profile)
		}
	}
	fmt.Fprintf(w, "\ntook %s\n", res.Finished.Sub(res.Started).Round(time.Second))
}

// printStepTable prints one row per step.
func printStepTable(w io.Writer, steps []steadyStep) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load\toffered/s\tanswered/s\terrors\twarm-up p99\tack p50\tack p99\tin worst s\tp99 without\t→processed p50\tp99\tbacklog +5s\thookinbox ms/req\tpostgres ms/req\tWAL kB/req\tFPI/req\tbusy\tother\tprocs\tRSS MB\tholds\t\n")
	for _, s := range steps {
		var svcMs, pgMs, walKB, fpi float64
		if n := float64(s.Ingest.Requests); n > 0 {
			svcMs, pgMs = 1000*s.CPU.Service/n, 1000*s.CPU.Postgres/n
			walKB, fpi = float64(s.WAL.Bytes)/1024/n, float64(s.WAL.FullPageImages)/n
		}
		holds := "yes"
		if !s.Holds {
			holds = "no"
		}
		worst, without := "-", "-"
		if ws := s.Ingest.WorstSecond; ws != nil {
			worst, without = fmt.Sprintf("%d/%d @%ds", ws.Slow, ws.OfSlow, ws.At), ws.P99Without.String()
		}
		procs := "-"
		if p := s.CPU.ProcessesStarted; p != nil {
			procs = strconv.FormatInt(*p, 10)
		}
		rss := "-"
		if s.RSSMB > 0 {
			rss = fmt.Sprintf("%.0f", s.RSSMB)
		}
		warm := "-"
		if s.Warmup != nil {
			warm = s.Warmup.Latency.P99.String()
		}
		fmt.Fprintf(tw, "%.2f×\t%.0f\t%.0f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.2f\t%.2f\t%.0f%%\t%.2f\t%s\t%s\t%s\t\n",
			s.Load, s.Ingest.TargetRate, s.Ingest.RequestsPerSec, s.Ingest.Errors, warm, s.Ingest.Latency.P50, s.Ingest.Latency.P99, worst, without,
			s.AckToProcessed.P50, s.AckToProcessed.P99, s.Backlog, svcMs, pgMs, walKB, fpi, 100*s.CPU.MachineBusy, s.CPU.Other/s.CPU.Seconds, procs, rss, holds)
	}
	tw.Flush()
}

// resultsPath is -out, or bench/results/<UTC time>.<scenario>.json.
func resultsPath(opts options, root string, started time.Time, scenario string) string {
	if opts.out != "" {
		return opts.out
	}
	return filepath.Join(root, "bench", "results", started.UTC().Format("2006-01-02T15-04-05Z")+"."+scenario+".json")
}

// longStep is the least length of a step whose seconds are told apart in
// the report: in a 20s step the worst second says enough.
const longStep = 60

// slowSeconds tells, for a step held for minutes (-steady-duration), how
// many of its seconds had an ack p99 over the 0.5× goal (ackGoalAtHalf), which were
// the slowest, and how many checkpoints it held; "" for a shorter step.
func slowSeconds(s steadyStep) string {
	p99 := s.Ingest.SecondP99
	if len(p99) < longStep {
		return ""
	}
	type second struct {
		at  int
		p99 duration
	}
	var over []second
	for at, d := range p99 {
		if time.Duration(d) > ackGoalAtHalf {
			over = append(over, second{at, d})
		}
	}
	slices.SortFunc(over, func(a, b second) int { return cmp.Compare(b.p99, a.p99) })
	var slowest []string
	for _, sec := range over[:min(len(over), 8)] {
		slowest = append(slowest, fmt.Sprintf("@%ds %s", sec.at, sec.p99))
	}
	line := fmt.Sprintf("held %ds: %d seconds with an ack p99 over %s", len(p99), len(over), ackGoalAtHalf)
	if len(slowest) > 0 {
		line += " (" + strings.Join(slowest, ", ") + ")"
	}
	return line + fmt.Sprintf("; %d checkpoints", s.WAL.Checkpoints)
}
