// Command hookinbox-bench measures hookinbox against the limit of the same
// work on the same machine, in one run: pgbench doing one delivery's
// transaction, then `hookinbox serve` under signed GitHub deliveries, then
// River working no-op jobs. Absolute numbers on a shared machine are noise;
// the ratios between phases of one run are what it reports. See
// bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookinbox/hookinbox/internal/config"
)

// options are the command's flags.
type options struct {
	duration     time.Duration
	concurrency  int
	manyConns    int
	dupShare     float64
	payloadMin   int
	payloadMax   int
	batchWindow  time.Duration
	jobPerBatch  bool
	processBatch int
	profile      bool
	pgStats      bool
	pgExplain    time.Duration
	pgSettings   []string
	out          string
	show         string

	scenario       string
	retentionRows  int
	upgradeRows    int
	retentionRate  float64
	retentionAlone time.Duration
	// retentionPrefill is how many recent deliveries the retention
	// scenario writes into the partition new deliveries go to.
	retentionPrefill int

	steadyConns int
	steadyStep  float64
	steadyMax   float64
	steadyBase  float64
	// steadyPrefill is how many deliveries of history the steady
	// scenario writes before its steps (0: a fresh database).
	steadyPrefill int
	// steadyPrefillAged opens a key generation after the prefill, so the
	// history's keys sit in an older one, as they do once a generation
	// has served the longest retention.
	steadyPrefillAged bool
	steadyWarm        time.Duration
	steadyDur         time.Duration
	pgSample          time.Duration

	destInFlight int
	destOrdered  bool
	destRate     float64
	destLoad     float64

	kafkaMessages   int
	kafkaPartitions int

	// tracingLoad is the tracing scenario's open-loop rate as a fraction
	// of pgbench's tps; tracingRounds how many phases each mode runs.
	tracingLoad   float64
	tracingRounds int

	// pathLoads are the path scenario's steps, fractions of pgbench's tps.
	pathLoads []float64
}

// scenarios are -scenario's values.
var scenarios = []string{"throughput", "retention", "steady", "destinations", "kafka", "tracing", "upgrade", "path"}

func parseOptions(args []string) (options, error) {
	o := options{pathLoads: []float64{0.25, 0.5}}
	fs := flag.NewFlagSet("hookinbox-bench", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "length of the pgbench, ingest and River phases (the half-load run takes half)")
	fs.IntVar(&o.concurrency, "concurrency", 32, "pgbench clients and concurrent HTTP connections")
	fs.IntVar(&o.manyConns, "many-connections", 128, "connections of the batching phase: a second closed loop, and pgbench at as many clients (0: skip it)")
	fs.Float64Var(&o.dupShare, "dup-share", 0.10, "share of requests that resend an accepted delivery (a provider's retry)")
	fs.IntVar(&o.payloadMin, "payload-min", 2048, "smallest push payload, bytes")
	fs.IntVar(&o.payloadMax, "payload-max", 8192, "largest push payload, bytes")
	fs.BoolVar(&o.jobPerBatch, "job-per-batch", true, "the service's ingest.job_per_batch: one processing job per ingest batch (false: one per delivery)")
	fs.DurationVar(&o.batchWindow, "batch-window", config.DefaultIngestBatchWindow.Std(), "the service's ingest.batch_window (0: each request commits alone)")
	fs.IntVar(&o.processBatch, "process-batch", 200, "the service's jobs.batch_size (1: each delivery processed in a transaction of its own)")
	fs.BoolVar(&o.pgStats, "pg-stats", false, "load pg_stat_statements and print the statements that took the database's time in each service phase")
	fs.DurationVar(&o.pgExplain, "pg-explain", 0, "load auto_explain into the private server and log the analyzed plan of every statement slower than this; "+
		"the server's log is kept as bench/results/<UTC time>.pg.log (0: off; timing every plan node slows the database, so take no figures from such a run)")
	fs.Func("pg-setting", "a setting of the private server, name=value as postgres -c takes it (repeatable): to try one before making it hookinbox's", func(v string) error {
		if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
			return fmt.Errorf("want name=value, got %q", v)
		}
		o.pgSettings = append(o.pgSettings, v)
		return nil
	})
	fs.BoolVar(&o.profile, "pprof", true, "take a CPU profile of the service during the closed-loop ingest, next to the results")
	fs.StringVar(&o.show, "show", "", "print the report of this results file again, and run nothing")
	fs.StringVar(&o.out, "out", "", "results file (default bench/results/<UTC time>.json in the module)")
	fs.StringVar(&o.scenario, "scenario", "throughput", "throughput (the default run); retention: retire -retention-rows expired deliveries while ingest runs at -retention-rate; "+
		"steady: one default serve under GitHub issues traffic, in steps of -steady-step × pgbench's rate; destinations: one serve sending every delivery to a local receiver; "+
		"kafka: a Kafka source's intake of a pre-filled topic and a Kafka destination's drain, on kfake in the bench process; "+
		"tracing: one serve's CPU per delivery with tracing on (every span exported to a collector in the bench process) against off, modes in turns; "+
		"path: the machine's CPU per forwarded delivery, one serve sending every delivery to a local receiver, against pgbench's per transaction, with serve's CPU profile and the statements; "+
		"upgrade: how long migration 026 holds an older ingest's writes on an inbox of -upgrade-rows deliveries, with and without migrate --prepare")
	fs.IntVar(&o.upgradeRows, "upgrade-rows", 1_000_000, "upgrade scenario: deliveries in the inbox that migration 026 makes partitioned")
	fs.IntVar(&o.retentionRows, "retention-rows", 1_000_000, "retention scenario: expired deliveries to retire")
	fs.Float64Var(&o.retentionRate, "retention-rate", 0, "retention scenario: steady ingest rate, deliveries/s (0: half pgbench's one-delivery rate)")
	fs.DurationVar(&o.retentionAlone, "retention-alone", 0, "retention scenario: how long ingest runs alone, before the drop pass and again after it, the baseline of the passes' ratios; "+
		"each pass's phase lasts at least as long (0: -duration)")
	fs.IntVar(&o.retentionPrefill, "retention-prefill", 0, "retention scenario: processed deliveries received 1 ms apart up to now, written into the partition new deliveries go to before the phases, "+
		"so that it is large from the start, as a day's partition is when retention runs, and the phases' inbox grows by a smaller share (0: none)")
	fs.IntVar(&o.steadyConns, "steady-connections", 96, "steady scenario: connections of the open loop")
	fs.Float64Var(&o.steadyStep, "steady-step", 0.25, "steady scenario: each step adds this fraction of pgbench's one-delivery tps to the load")
	fs.Float64Var(&o.steadyMax, "steady-max", 3, "steady scenario: the highest load tried, as a fraction of pgbench's tps")
	fs.IntVar(&o.steadyPrefill, "steady-prefill", 0, "steady scenario: deliveries of history to write between two runs of the steps, the first on the empty inbox "+
		"(processed issues deliveries 1 ms apart up to now, each with its key, outcome and completed River job, then VACUUM ANALYZE), "+
		"to compare an inbox that has run for a while with a fresh one; 0: a fresh database only")
	fs.BoolVar(&o.steadyPrefillAged, "steady-prefill-aged", false, "steady scenario: open a new key generation after the prefill, so the history's keys are in an older one "+
		"and every delivery's look-up probes both (as after the inbox_partitions job opens one); false: the history's keys share the current generation")
	fs.Float64Var(&o.steadyBase, "steady-base", 0, "steady scenario: the rate the steps are fractions of, in requests/s, instead of this run's pgbench tps "+
		"(to compare two builds at the same offered rates; pgbench still runs and is reported)")
	fs.DurationVar(&o.steadyWarm, "steady-warmup", 5*time.Second, "steady scenario: how long each step's load runs before it is measured "+
		"(after the step's CHECKPOINT, when every first write of a page logs the whole page); its ack p99 is reported apart")
	fs.DurationVar(&o.steadyDur, "steady-duration", 0, "steady scenario: how long each step is measured (0: -duration); "+
		"a step of minutes holds the load through the checkpoints and autovacuum rounds a 20s step may miss")
	fs.DurationVar(&o.pgSample, "pg-sample", 0, "steady, retention and destinations scenarios: read the server's counters this often during each step (retention: each phase; destinations: the backlog sent under traffic) and print them "+
		"(the machine's busy share, blocks read into the buffer pool and by which relation, backend and checkpoint writes, WAL MB/s and full-page images, "+
		"checkpoints started, what vacuum and analyze are working on, the oldest snapshot held; ms per WAL sync with -pg-setting track_wal_io_timing=on; 0: off)")
	fs.IntVar(&o.destInFlight, "dest-in-flight", 32, "destinations and kafka scenarios: the destination's max_in_flight, and the bare client's connections (kafka: the bare producer's goroutines)")
	fs.BoolVar(&o.destOrdered, "dest-ordered", false, "destinations scenario: the route is ordered (each issue's events one at a time, in order) instead of unordered")
	fs.Float64Var(&o.destRate, "dest-rate-limit", 0, "destinations scenario: the destination's rate_limit, as a fraction of pgbench's tps (0: none)")
	fs.Float64Var(&o.destLoad, "dest-load", 0.5, "destinations scenario: the open-loops' rate, as a fraction of pgbench's tps")
	fs.IntVar(&o.kafkaMessages, "kafka-messages", 100_000, "kafka scenario: messages in the pre-filled topic, each one delivery and one send")
	fs.IntVar(&o.kafkaPartitions, "kafka-partitions", 6, "kafka scenario: partitions of each topic")
	fs.Float64Var(&o.tracingLoad, "tracing-load", 0.25, "tracing scenario: the open-loop rate of every phase, as a fraction of pgbench's tps")
	fs.IntVar(&o.tracingRounds, "tracing-rounds", 4, "tracing scenario: phases of each mode, tracing off and on in turns (off, on, on, off, …), each on a fresh serve for -duration")
	fs.Func("path-load", "path scenario: the steps' open-loop rates, fractions of pgbench's tps, comma-separated (default 0.25,0.5)", func(v string) error {
		loads, err := parseLoads(v)
		o.pathLoads = loads
		return err
	})
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	case o.duration < 3*time.Second:
		return o, errors.New("-duration must be at least 3s")
	case o.concurrency < 1:
		return o, errors.New("-concurrency must be at least 1")
	case o.manyConns < 0:
		return o, errors.New("-many-connections must not be negative")
	case o.dupShare < 0 || o.dupShare >= 1:
		return o, errors.New("-dup-share must be in [0, 1)")
	case !slices.Contains(scenarios, o.scenario):
		return o, fmt.Errorf("-scenario %q: want one of %s", o.scenario, strings.Join(scenarios, ", "))
	case o.steadyBase < 0 || o.steadyWarm < 0 || o.steadyDur < 0 || o.steadyPrefill < 0 || o.retentionPrefill < 0:
		return o, errors.New("-steady-base, -steady-warmup, -steady-duration, -steady-prefill and -retention-prefill must not be negative")
	case o.pgSample != 0 && o.pgSample < time.Second:
		return o, errors.New("-pg-sample must be 0 (off) or at least 1s")
	case o.steadyConns < 1 || o.steadyStep <= 0 || o.steadyMax < o.steadyStep:
		return o, errors.New("-steady-connections must be at least 1, -steady-step positive and -steady-max at least -steady-step")
	case o.destInFlight < 1 || o.destLoad <= 0 || o.destRate < 0:
		return o, errors.New("-dest-in-flight must be at least 1, -dest-load positive and -dest-rate-limit not negative")
	case o.kafkaMessages < 1 || o.kafkaPartitions < 1:
		return o, errors.New("-kafka-messages and -kafka-partitions must be at least 1")
	case o.tracingLoad <= 0 || o.tracingRounds < 1:
		return o, errors.New("-tracing-load must be positive and -tracing-rounds at least 1")
	case o.processBatch < 1:
		return o, errors.New("-process-batch must be at least 1")
	case o.batchWindow < 0:
		return o, errors.New("-batch-window must not be negative")
	case o.payloadMin < minPayload || o.payloadMax < o.payloadMin:
		return o, fmt.Errorf("-payload-min must be at least %d and at most -payload-max", minPayload)
	}
	return o, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	switch {
	case err == nil && opts.show != "":
		err = show(os.Stdout, opts.show)
	case err == nil:
		err = run(ctx, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookinbox-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts options) error {
	start := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	switch opts.scenario {
	case "retention":
		return runRetention(ctx, opts, root, progress)
	case "steady":
		return runSteady(ctx, opts, root, progress)
	case "destinations":
		return runDestinations(ctx, opts, root, progress)
	case "kafka":
		return runKafka(ctx, opts, root, progress)
	case "tracing":
		return runTracing(ctx, opts, root, progress)
	case "upgrade":
		return runUpgrade(ctx, opts, root, progress)
	case "path":
		return runPath(ctx, opts, root, progress)
	}
	res := results{runInfo: newRunInfo(ctx, opts, root, progress)}
	if opts.out == "" {
		opts.out = filepath.Join(root, "bench", "results", res.Started.Format("2006-01-02T15-04-05Z")+".json")
	}
	if err := os.MkdirAll(filepath.Dir(opts.out), 0o755); err != nil {
		return err
	}

	r, err := setupRig(ctx, opts, root, progress)
	if err != nil {
		return err
	}
	defer r.close()
	pg, work, payloads := r.pg, r.work, r.payloads
	res.Database = pg.describe()
	// pgbench writes to a database of its own, migrated the same way, so
	// that the service's inbox holds exactly the deliveries of this run.
	baselineURL, err := pg.createDatabase(ctx, "pgbench", true)
	if err != nil {
		return err
	}

	meter := cpuMeter{postmasterPID: pg.postmasterPID()}
	res.CPU = map[string]cpuUse{}
	// Every phase starts after a CHECKPOINT: the WAL of the phase before
	// (about 1 GB for 100,000 deliveries of 5 KB) is then flushed before
	// it, not in the middle of the next phase's latencies.
	settle := func() { r.settle(ctx, progress) }
	phase := func(name string) func() {
		if name != "drain" { // its worker is already running: settled before it started
			settle()
		}
		end := meter.span(ctx, pg, r.svcURL, baselineURL)
		return func() { res.CPU[name] = end() }
	}

	progress("baseline: pgbench, %d clients, %s", opts.concurrency, opts.duration)
	done := phase("pgbench")
	res.Pgbench, err = runPgbench(ctx, pgbenchConfig{
		BinDir: pg.binDir, URL: baselineURL, Work: work, Clients: opts.concurrency,
		Duration: opts.duration, Payloads: payloads,
	})
	if err != nil {
		return err
	}
	done()
	progress("pgbench: %.0f tps", res.Pgbench.TPS)
	if clients := pgbenchManyClients(ctx, pg, opts, progress); clients > 0 {
		// The batching target compares ingest at many connections with the
		// database's best one-transaction rate: pgbench at as many clients
		// too, in case it does better there than at -concurrency.
		progress("baseline: pgbench, %d clients, %s", clients, opts.duration/6)
		done = phase("pgbench_many")
		many, err := runPgbench(ctx, pgbenchConfig{
			BinDir: pg.binDir, URL: baselineURL, Work: work, Clients: clients,
			Duration: opts.duration / 6, Payloads: payloads,
		})
		if err != nil {
			return err
		}
		done()
		res.PgbenchMany = &many
		progress("pgbench: %.0f tps", many.TPS)
	}

	// Ingest and processing are measured apart, each against its own
	// limit: an ingest-only process takes the load (pgbench's transaction
	// is ingest's alone), then a worker-only process works off the backlog
	// with nothing else running (as River's reference does).
	progress("starting hookinbox serve --role=ingest")
	svc, err := r.start(ctx, "ingest")
	if err != nil {
		return err
	}
	defer svc.stop()
	db := r.db

	gen := newGenerator(svc.webhookURL, "push", payloads, opts.concurrency, opts.dupShare)
	progress("ingest: closed loop, %d connections, %s", opts.concurrency, opts.duration)
	meter.servicePID = svc.cmd.Process.Pid
	svc.rss.reset()
	profiled := make(chan error, 1)
	if opts.profile {
		// The profile spans the phase but its first and last second, when
		// connections open and close.
		res.Profile = strings.TrimSuffix(opts.out, ".json") + ".ingest.pprof"
		go func() {
			time.Sleep(time.Second)
			profiled <- svc.cpuProfile(ctx, opts.duration-2*time.Second, res.Profile)
		}()
	} else {
		profiled <- nil
	}
	stats := statementStats{enabled: opts.pgStats, db: db}
	stats.reset(ctx)
	done = phase("ingest")
	res.Ingest = gen.closedLoop(ctx, opts.duration)
	done()
	stats.readInto(ctx, "ingest", &res)
	res.RSS.PeakUnderLoadMB = svc.rss.peakMB()
	batches, err := svc.batchSizes(ctx, "ingest")
	if err != nil {
		progress("warning: %v", err)
	} else if batches.batches == 0 && opts.batchWindow > 0 {
		progress("warning: batching is on but hookinbox_batch_size counted no ingest batch")
	}
	res.IngestBatchMean = batches.mean()
	if err := <-profiled; err != nil {
		progress("warning: %v", err)
		res.Profile = ""
	}
	progress("ingest: %.0f accepted/s, p99 %s, %d errors", res.Ingest.AcceptedPerSec, res.Ingest.Latency.P99, res.Ingest.Errors)

	if opts.manyConns > 0 {
		progress("ingest: closed loop, %d connections, %s", opts.manyConns, opts.duration/3)
		many := gen.withConns(opts.manyConns)
		svc.rss.reset()
		stats.reset(ctx)
		done = phase("ingest_many")
		load := many.closedLoop(ctx, opts.duration/3)
		done()
		many.close()
		stats.readInto(ctx, "ingest_many", &res)
		res.IngestMany = &load
		res.RSS.PeakManyMB = svc.rss.peakMB()
		after, err := svc.batchSizes(ctx, "ingest")
		if err != nil {
			progress("warning: %v", err)
		} else if batches.batches > 0 {
			// Only what this phase added, and only if the count after the
			// first phase was read.
			res.IngestManyBatchMean = after.since(batches).mean()
		}
		progress("ingest: %.0f accepted/s, p99 %s, %d errors", load.AcceptedPerSec, load.Latency.P99, load.Errors)
	}

	best, _ := res.bestPgbench()
	rate := best / 2
	progress("ingest: open loop at %.0f/s (half the pgbench rate), %s", rate, opts.duration/2)
	done = phase("half_load")
	half := gen.openLoop(ctx, rate, opts.duration/2)
	done()
	res.HalfLoad = &half
	progress("half load: p99 %s, %d errors", half.Latency.P99, half.Errors)
	res.Audit, err = audit(ctx, db, gen.acks())
	if err != nil {
		return err
	}
	res.RSS.HighWaterMB = svc.rss.highWaterMB()
	progress("audit: %d accepted, %d lost", res.Audit.Accepted, res.Audit.Lost())
	if err := svc.stop(); err != nil {
		progress("warning: %v", err)
	}

	backlog, err := countReceived(ctx, db)
	if err != nil {
		return err
	}
	progress("processing: hookinbox serve --role=worker on a backlog of %d", backlog)
	settle()
	worker, err := r.start(ctx, "worker")
	if err != nil {
		return err
	}
	defer worker.stop()
	meter.servicePID = worker.cmd.Process.Pid
	started := time.Now()
	stats.reset(ctx)
	drainProfiled := make(chan error, 1)
	if opts.profile {
		// The worker's profile covers the start of the drain: a default
		// run's backlog takes longer than this to work off.
		res.DrainProfile = strings.TrimSuffix(opts.out, ".json") + ".drain.pprof"
		go func() { drainProfiled <- worker.cpuProfile(ctx, 5*time.Second, res.DrainProfile) }()
	} else {
		drainProfiled <- nil
	}
	done = phase("drain")
	drained, err := waitDrained(ctx, db, drainLimit(opts.duration))
	if err != nil {
		return err
	}
	waited := time.Now()
	done()
	stats.readInto(ctx, "drain", &res)
	res.Processing, err = drainStats(ctx, db, backlog, started, waited, drained, gen.acks())
	if err != nil {
		return err
	}
	res.Processing.RSSMB = worker.rss.peakMB()
	if err := <-drainProfiled; err != nil {
		progress("warning: %v", err)
		res.DrainProfile = ""
	}
	progress("processing: %d of %d in %s, %.0f/s", res.Processing.Processed, backlog, res.Processing.DrainTime, res.Processing.PerSec)
	if err := worker.stop(); err != nil {
		progress("warning: %v", err)
	}

	if mean := res.batchedMean(); mean >= 2 {
		// What the database takes in batches of the size ingest formed:
		// the ceiling for batched ingest, as pgbench's one-delivery
		// transaction is for unbatched ingest.
		n := int(mean + 0.5)
		progress("baseline: pgbench, %d deliveries per transaction, %d clients, %s", n, opts.concurrency, opts.duration/6)
		done = phase("pgbench_batched")
		batched, err := runPgbench(ctx, pgbenchConfig{
			BinDir: pg.binDir, URL: baselineURL, Work: work, Clients: opts.concurrency,
			Duration: opts.duration / 6, Payloads: payloads, Batch: n,
		})
		if err != nil {
			return err
		}
		done()
		res.PgbenchBatched = &batched
		progress("pgbench batched: %.0f deliveries/s", batched.DeliveriesPerSec)
	}

	progress("reference: River no-op jobs, %s", opts.duration)
	meter.servicePID = 0
	done = phase("river")
	res.River, err = riverRaw(ctx, r.svcURL, opts.duration)
	if err != nil {
		return err
	}
	done()
	progress("river: %.0f jobs/s", res.River.JobsPerSec)

	res.finish()
	res.evaluate()
	printReport(os.Stdout, res)
	if err := writeJSON(opts.out, res); err != nil {
		return err
	}
	progress("wrote %s", opts.out)
	return nil
}

// parseLoads reads a comma-separated list of positive fractions.
func parseLoads(v string) ([]float64, error) {
	var loads []float64
	for f := range strings.SplitSeq(v, ",") {
		load, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || load <= 0 {
			return nil, fmt.Errorf("want positive fractions separated by commas, got %q", v)
		}
		loads = append(loads, load)
	}
	return loads, nil
}

// pgbenchManyClients is -many-connections, fewer if the server would not
// take that many more connections, or 0 to skip the phase.
func pgbenchManyClients(ctx context.Context, pg *postgres, opts options, progress func(string, ...any)) int {
	if opts.manyConns == 0 {
		return 0
	}
	free, err := pg.freeConnections(ctx)
	if err != nil {
		progress("warning: pgbench at %d clients skipped: %v", opts.manyConns, err)
		return 0
	}
	clients := min(opts.manyConns, free-2) // and a connection or two for the harness
	switch {
	case clients <= opts.concurrency:
		progress("warning: pgbench at %d clients skipped: the server takes %d more connections (max_connections)", opts.manyConns, free)
		return 0
	case clients < opts.manyConns:
		progress("warning: pgbench at %d clients instead of %d: the server takes %d more connections (max_connections)", clients, opts.manyConns, free)
	}
	return clients
}

// drainLimit bounds the wait for processing to work off the backlog, long
// enough to time it and short enough to keep a default run under 3 minutes.
func drainLimit(d time.Duration) time.Duration { return max(min(d, 30*time.Second), 5*time.Second) }
