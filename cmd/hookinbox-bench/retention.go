package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/hookinbox/hookinbox/jobs"
)

// retentionResult is the -scenario retention report: what retiring a
// large expired history costs, and what it does to ingest running beside,
// by dropping its partition and by deleting it in batches.
type retentionResult struct {
	runInfo
	pgbenchBase
	Rows         int     `json:"expired_rows"`
	PayloadBytes int     `json:"expired_payload_bytes"`
	Rate         float64 `json:"ingest_rate_per_sec"`
	// PrefillRows are the recent deliveries written into the current
	// partition before the phases (-retention-prefill), in PrefillSeconds.
	PrefillRows    int     `json:"prefill_rows,omitempty"`
	PrefillSeconds float64 `json:"prefill_seconds,omitempty"`
	// Without is the open loop alone; Drop and Batch are the same loop
	// while a pass retires the history, as a partition of its own and as
	// rows among the new deliveries. After is the loop alone again, once
	// the drop pass is done: the inbox grows through the run, and the
	// two alone phases bracket the drop pass in time.
	Without  retentionPhase `json:"without"`
	Drop     retentionPhase `json:"drop"`
	After    retentionPhase `json:"after_drop,omitempty"`
	Batch    retentionPhase `json:"batch"`
	RowsLeft int            `json:"expired_rows_left"`
}

// retentionPhase is an open loop with the WAL and CPU it took, how long
// its retention pass ran, and the server's counters during it
// (-pg-sample).
type retentionPhase struct {
	Load      loadResult `json:"load"`
	CPU       cpuUse     `json:"cpu"`
	WALBytes  int64      `json:"wal_bytes"`
	PassSecs  float64    `json:"pass_seconds,omitempty"`
	PGSamples []pgSample `json:"pg_samples,omitempty"`
}

// aloneFor is how long ingest runs alone, and a pass's phase at least:
// -duration, unless -retention-alone says otherwise.
func aloneFor(opts options) time.Duration {
	if opts.retentionAlone > 0 {
		return opts.retentionAlone
	}
	return opts.duration
}

// runRetention measures retention passes as a long-running inbox meets
// them: -retention-rows processed deliveries received 40 days ago (past
// the default 30 days), with ingest at -retention-rate (0: half
// pgbench's one-delivery rate) first alone (aloneFor), then during a pass that drops
// the history's partition, then alone again as long, then during one that
// deletes as many expired deliveries seeded among the new ones, in batches.
func runRetention(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := retentionResult{runInfo: newRunInfo(ctx, opts, root, progress), Rows: opts.retentionRows, PayloadBytes: 2048}
	r, err := setupRig(ctx, opts, root, progress)
	if err != nil {
		return err
	}
	defer r.close()
	if res.Pgbench, res.PgbenchCPU, err = r.pgbenchBaseline(ctx, progress); err != nil {
		return err
	}
	if res.Rate = opts.retentionRate; res.Rate == 0 {
		res.Rate = 0.5 * res.Pgbench.TPS
	}
	progress("starting hookinbox serve")
	svc, err := r.start(ctx, "all")
	if err != nil {
		return err
	}
	defer svc.stop()
	part, keys, err := seedExpiredPartition(ctx, r.db, opts.retentionRows, progress)
	if err != nil {
		return err
	}
	if opts.retentionPrefill > 0 {
		if res.PrefillSeconds, err = prefill(ctx, r.db, "push", r.payloads, opts.retentionPrefill, progress); err != nil {
			return err
		}
		res.PrefillRows = opts.retentionPrefill
	}
	r.settle(ctx, progress)
	gen := newGenerator(svc.webhookURL, "push", r.payloads, opts.concurrency, opts.dupShare)
	meter := cpuMeter{servicePID: svc.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}
	alone := aloneFor(opts)
	progress("ingest alone: open loop at %.0f/s for %s", res.Rate, alone)
	if res.Without, err = retentionMeasure(ctx, r, meter, progress, func() loadResult { return gen.openLoop(ctx, res.Rate, alone) }); err != nil {
		return err
	}
	progress("ingest alone: p99 %s, %d errors", res.Without.Load.Latency.P99, res.Without.Load.Errors)
	// Retired: the partition dropped and, after it, its keys' generation.
	gone := func(ctx context.Context) (bool, error) {
		var gone bool
		err := r.db.QueryRow(ctx, "SELECT to_regclass($1) IS NULL AND to_regclass($2) IS NULL", part, keys).Scan(&gone)
		return gone, err
	}
	if res.Drop, err = retentionPass(ctx, r, meter, gen, res.Rate, alone, gone, progress); err != nil {
		return err
	}
	r.settle(ctx, progress)
	progress("ingest alone after the drop: open loop at %.0f/s for %s", res.Rate, alone)
	if res.After, err = retentionMeasure(ctx, r, meter, progress, func() loadResult { return gen.openLoop(ctx, res.Rate, alone) }); err != nil {
		return err
	}
	progress("ingest alone after the drop: p99 %s, %d errors", res.After.Load.Latency.P99, res.After.Load.Errors)
	if err := seedExpiredOpen(ctx, r.db, opts.retentionRows, progress); err != nil {
		return err
	}
	r.settle(ctx, progress)
	deleted := func(ctx context.Context) (bool, error) {
		var left bool
		err := r.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inbox WHERE received_at < now() - interval '30 days')`).Scan(&left)
		return !left, err
	}
	if res.Batch, err = retentionPass(ctx, r, meter, gen, res.Rate, alone, deleted, progress); err != nil {
		return err
	}
	if err := r.db.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE received_at < now() - interval '30 days'`).Scan(&res.RowsLeft); err != nil {
		return err
	}
	res.finish()
	printRetention(os.Stdout, res)
	out := resultsPath(opts, root, res.Started, "retention")
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// retentionMeasure runs load and returns it with the CPU and WAL of its span.
func retentionMeasure(ctx context.Context, r *rig, meter cpuMeter, progress func(string, ...any), load func() loadResult) (retentionPhase, error) {
	before, err := readPGCounters(ctx, r.db)
	if err != nil {
		return retentionPhase{}, err
	}
	end := meter.span(ctx, r.pg, r.svcURL)
	var p retentionPhase
	sampled := sampleDuring(ctx, r.db, r.opts.pgSample, progress)
	p.Load = load()
	p.PGSamples = sampled()
	p.CPU = end()
	after, err := readPGCounters(ctx, r.db)
	p.WALBytes = after.walBytes - before.walBytes
	return p, err
}

// retentionPass runs the open loop while the retention job the bench
// enqueues (as the next tick would) runs, until done says the history is
// retired, and for two seconds after: atLeast in all, so that the phase
// meets as many of the machine's periodic stalls (the kernel's
// write-back, checkpoints, autovacuum rounds) as an alone phase.
func retentionPass(ctx context.Context, r *rig, meter cpuMeter, gen *generator, rate float64, atLeast time.Duration,
	done func(context.Context) (bool, error), progress func(string, ...any)) (retentionPhase, error) {
	var t1 time.Time
	var passSecs float64
	p, err := retentionMeasure(ctx, r, meter, progress, func() loadResult {
		loadCtx, stopLoad := context.WithCancel(ctx)
		defer stopLoad()
		during := make(chan loadResult, 1)
		go func() { during <- gen.openLoop(loadCtx, rate, 15*time.Minute) }()
		time.Sleep(2 * time.Second) // the load settles before the pass starts
		progress("retention pass, ingest at %.0f/s beside it", rate)
		t1 = time.Now()
		if err := enqueueRetention(ctx, r.db); err != nil {
			progress("warning: %v", err)
		}
		for deadline := time.Now().Add(14 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if ok, err := done(ctx); err != nil || ok {
				break
			}
		}
		passSecs = time.Since(t1).Seconds()
		time.Sleep(max(2*time.Second, atLeast-2*time.Second-time.Since(t1)))
		stopLoad()
		return <-during
	})
	p.PassSecs = passSecs
	progress("pass: %.1fs, ingest p99 %s, %d errors", passSecs, p.Load.Latency.P99, p.Load.Errors)
	return p, err
}

func enqueueRetention(ctx context.Context, db *pgxpool.Pool) error {
	rc, err := river.NewClient(riverpgxv5.New(db), &river.Config{})
	if err != nil {
		return err
	}
	_, err = rc.Insert(ctx, jobs.RetentionArgs{}, nil)
	return err
}

// retentionBaseline is what the passes are measured against: the alone
// phases' ack p99 and median second averaged (before and after the drop
// pass, where the run has both), their WAL and CPU per second together.
type retentionBaseline struct {
	p99, second          duration
	walPerSec, cpuPerSec float64
}

func baselineOf(phases ...retentionPhase) retentionBaseline {
	var b retentionBaseline
	var n int
	var wal, cpu, secs float64
	for _, p := range phases {
		if p.Load.Requests == 0 {
			continue // a results file from before the after phase
		}
		n++
		b.p99 += p.Load.Latency.P99
		b.second += medianSecondP99(p.Load)
		wal, cpu, secs = wal+float64(p.WALBytes), cpu+p.CPU.Postgres+p.CPU.Service, secs+p.CPU.Seconds
	}
	if n > 0 {
		b.p99, b.second = b.p99/duration(n), b.second/duration(n)
		b.walPerSec, b.cpuPerSec = wal/secs, cpu/secs
	}
	return b
}

func printRetention(w io.Writer, res retentionResult) {
	base := baselineOf(res.Without, res.After)
	fmt.Fprintf(w, "retention: %d expired deliveries (2 KB payloads) twice: a partition of their own, then among new deliveries; %d expired left\n",
		res.Rows, res.RowsLeft)
	fmt.Fprintf(w, "ingest at %.0f/s (0.5x pgbench's %.0f tps), one serve (role all) on its embedded PostgreSQL\n", res.Rate, res.Pgbench.TPS)
	fmt.Fprintf(w, "%-20s %7s %8s %8s %10s %6s %9s %9s %14s %11s %9s %11s\n", "", "pass", "ack p50", "ack p99", "sec. p99", "errors",
		"WAL MB/s", "PG CPU/s", "pass WAL B/row", "pass CPU s", "p99/alone", "sec./alone")
	row := func(name string, p retentionPhase) {
		var extraWAL, extraCPU float64
		if p.PassSecs > 0 {
			extraWAL = float64(p.WALBytes) - base.walPerSec*p.CPU.Seconds
			extraCPU = p.CPU.Postgres + p.CPU.Service - base.cpuPerSec*p.CPU.Seconds
		}
		fmt.Fprintf(w, "%-20s %6.1fs %8s %8s %10s %6d %9.1f %9.2f %14.0f %11.1f %9.2f %11.2f\n", name, p.PassSecs,
			p.Load.Latency.P50, p.Load.Latency.P99, medianSecondP99(p.Load), p.Load.Errors, float64(p.WALBytes)/1e6/p.CPU.Seconds,
			p.CPU.Postgres/p.CPU.Seconds, extraWAL/float64(res.Rows), extraCPU,
			float64(p.Load.Latency.P99)/float64(base.p99), float64(medianSecondP99(p.Load))/float64(base.second))
	}
	phases := []struct {
		name string
		p    retentionPhase
	}{{"alone", res.Without}, {"partition dropped", res.Drop}, {"alone after the drop", res.After}, {"deleted by batches", res.Batch}}
	for _, ph := range phases {
		if ph.p.Load.Requests > 0 {
			row(ph.name, ph.p)
		}
	}
	fmt.Fprintln(w, "sec. p99: the median of the phase's per-second p99s, which one slow second (an autovacuum's) does not move")
	fmt.Fprintln(w, "/alone: against the alone phases' mean, before and after the drop pass; pass WAL and CPU: beyond theirs")
	fmt.Fprintf(w, "goal: ack p99 during the drop pass / alone <= 1.1: %.2f (against the first alone phase only: %.2f)\n",
		float64(res.Drop.Load.Latency.P99)/float64(base.p99), float64(res.Drop.Load.Latency.P99)/float64(res.Without.Load.Latency.P99))
	slow := 2 * base.second
	for _, ph := range phases {
		if ph.p.Load.Requests == 0 {
			continue
		}
		printSlowSeconds(w, ph.name, ph.p.Load, slow)
		if len(ph.p.PGSamples) > 0 {
			fmt.Fprintf(w, "server counters, %s:\n", ph.name)
			printPGSamples(w, ph.p.PGSamples)
		}
	}
}

// printSlowSeconds lists the seconds of l whose p99 is over slow (twice
// the alone phase's median second): how often the machine's stalls came.
func printSlowSeconds(w io.Writer, name string, l loadResult, slow duration) {
	var at []string
	for i, p99 := range l.SecondP99 {
		if p99 > slow {
			at = append(at, fmt.Sprintf("%ds %s", i, p99))
		}
	}
	fmt.Fprintf(w, "%s: %d of %d seconds with a p99 over %s", name, len(at), len(l.SecondP99), slow)
	if len(at) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(at, ", "))
	}
	fmt.Fprintln(w)
}

// medianSecondP99 is the median of a loop's per-second p99s.
func medianSecondP99(l loadResult) duration {
	if len(l.SecondP99) == 0 {
		return 0
	}
	s := slices.Clone(l.SecondP99)
	slices.Sort(s)
	return s[len(s)/2]
}
