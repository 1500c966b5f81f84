package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookinbox/hookinbox/internal/procmem"
)

// runInfo opens every scenario's results: when it ran, with which
// options, on which machine and server.
type runInfo struct {
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Options  map[string]any `json:"options"`
	Machine  machineInfo    `json:"machine"`
	Database databaseInfo   `json:"database"`
}

// newRunInfo starts a run's results, and warns when the machine is busy
// before it starts.
func newRunInfo(ctx context.Context, opts options, root string, progress func(string, ...any)) runInfo {
	i := runInfo{Started: time.Now().UTC(), Options: opts.export(), Machine: describeMachine(ctx, root)}
	if m := i.Machine; m.LoadAvg1 > 0.5*float64(m.CPUs) {
		progress("warning: load average %.2f on %d CPUs; another process is competing and the numbers will show it",
			m.LoadAvg1, m.CPUs)
	}
	return i
}

// finish records the end of the run.
func (i *runInfo) finish() {
	i.Finished = time.Now().UTC()
	i.Machine.LoadAvgAfter = loadAverage()
}

// results is everything one run measured; it is written as JSON as is.
type results struct {
	runInfo
	Pgbench pgbenchResult `json:"pgbench"`
	// PgbenchMany is pgbench's one-delivery transaction at -many-connections
	// clients.
	PgbenchMany *pgbenchResult `json:"pgbench_many,omitempty"`
	// PgbenchBatched runs pgbench's transaction for as many deliveries as
	// ingest's batches held on average; only with ingest.batch_window.
	PgbenchBatched  *pgbenchResult `json:"pgbench_batched,omitempty"`
	IngestBatchMean float64        `json:"ingest_batch_mean,omitempty"` // deliveries per ingest transaction (hookinbox_batch_size)
	Ingest          loadResult     `json:"ingest"`
	// IngestMany is the closed loop at -many-connections, the batching
	// target's phase.
	IngestMany          *loadResult      `json:"ingest_many,omitempty"`
	IngestManyBatchMean float64          `json:"ingest_many_batch_mean,omitempty"`
	Processing          processingResult `json:"processing"`
	HalfLoad            *loadResult      `json:"half_load"`
	RSS                 rssResult        `json:"rss"`
	Audit               auditResult      `json:"audit"`
	River               riverResult      `json:"river"`
	// Profile is the service's CPU profile of the closed-loop ingest.
	Profile string `json:"profile,omitempty"`
	// DrainProfile is the worker's CPU profile of the processing phase's
	// first seconds.
	DrainProfile string `json:"drain_profile,omitempty"`
	// Statements are the top statements by database time per phase
	// (-pg-stats).
	Statements map[string][]statementStat `json:"statements,omitempty"`
	// CPU is who used the CPUs during each phase.
	CPU     map[string]cpuUse `json:"cpu"`
	Ratios  ratios            `json:"ratios"`
	Targets []target          `json:"targets"`
}

type rssResult struct {
	PeakUnderLoadMB float64 `json:"peak_under_load_mb"`     // highest VmRSS of the ingest process sampled during the closed loop
	PeakManyMB      float64 `json:"peak_many_mb,omitempty"` // the same during the -many-connections closed loop
	HighWaterMB     float64 `json:"high_water_mb"`          // VmHWM at the end: the process's whole life
}

type ratios struct {
	IngestToPgbench float64 `json:"ingest_accepted_per_sec_to_pgbench_tps"`
	// ManyToBestPgbench is the many-connection ingest over the better of
	// the two one-transaction pgbench rates.
	ManyToBestPgbench float64 `json:"ingest_many_accepted_per_sec_to_best_pgbench_tps,omitempty"`
	ProcessedToRiver  float64 `json:"processed_per_sec_to_river_jobs_per_sec"`
}

// target is one of a scenario's goals and how the run did: a row of the
// goal tables in bench/README.md.
type target struct {
	Name     string `json:"name"`
	Measured string `json:"measured"`
	Goal     string `json:"goal"`
	Met      bool   `json:"met"`
	Note     string `json:"note,omitempty"`
}

type machineInfo struct {
	CPUs         int     `json:"cpus"`
	CPUModel     string  `json:"cpu_model"`
	MemTotal     string  `json:"mem_total"`
	Kernel       string  `json:"kernel"`
	GoVersion    string  `json:"go_version"`
	Commit       string  `json:"commit"`
	LoadAvg1     float64 `json:"load_avg_1m_before"`
	LoadAvgAfter float64 `json:"load_avg_1m_after"`
	// Writeback is when the kernel writes PostgreSQL's dirty data files
	// back (kernel_writeback.go): it decides whether a held step's tail
	// has a burst every 30 s (not in older results files).
	Writeback string `json:"kernel_writeback,omitempty"`
}

type databaseInfo struct {
	Embedded          bool   `json:"embedded"`
	Version           string `json:"version"`
	Fsync             string `json:"fsync"`
	SynchronousCommit string `json:"synchronous_commit"`
	SharedBuffers     string `json:"shared_buffers"`
	MaxWALSize        string `json:"max_wal_size,omitempty"`  // not in older results files
	WALInitZero       string `json:"wal_init_zero,omitempty"` // not in older results files
}

// duration is a time.Duration written as "12.3ms" in the JSON.
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.ParseDuration(s)
	*d = duration(t)
	return err
}

func (d duration) String() string {
	t := time.Duration(d)
	switch {
	case t >= time.Second:
		return t.Round(time.Millisecond).String()
	case t >= time.Millisecond:
		return t.Round(10 * time.Microsecond).String()
	}
	return t.Round(time.Microsecond).String()
}

func (o options) export() map[string]any {
	return map[string]any{
		"duration": o.duration.String(), "concurrency": o.concurrency, "many_connections": o.manyConns, "dup_share": o.dupShare,
		"payload_min": o.payloadMin, "payload_max": o.payloadMax, "batch_window": o.batchWindow.String(),
		"job_per_batch": o.jobPerBatch,
		"process_batch": o.processBatch, "scenario": o.scenario,
		"steady_connections": o.steadyConns, "steady_step": o.steadyStep, "steady_max": o.steadyMax, "steady_base": o.steadyBase, "steady_warmup": o.steadyWarm.String(),
		"steady_duration": o.steadyDur.String(), "retention_alone": o.retentionAlone.String(), "dest_in_flight": o.destInFlight, "dest_load": o.destLoad, "dest_ordered": o.destOrdered, "dest_rate_limit": o.destRate, "pg_explain": o.pgExplain.String(),
		"pg_settings": o.pgSettings, "pg_sample": o.pgSample.String(), "tracing_load": o.tracingLoad, "tracing_rounds": o.tracingRounds, "upgrade_rows": o.upgradeRows,
		"path_loads": o.pathLoads,
	}
}

// bestPgbench is the database's best one-delivery-per-transaction rate,
// pgbench at -concurrency or at -many-connections clients, and its clients.
func (r *results) bestPgbench() (tps float64, clients int) {
	if m := r.PgbenchMany; m != nil && m.TPS > r.Pgbench.TPS {
		return m.TPS, m.Clients
	}
	return r.Pgbench.TPS, r.Pgbench.Clients
}

// batchedMean is the mean ingest batch of the phase the batching target
// is measured in.
func (r *results) batchedMean() float64 {
	if r.IngestMany != nil {
		return r.IngestManyBatchMean
	}
	return r.IngestBatchMean
}

// evaluate computes the ratios and checks the throughput targets.
func (r *results) evaluate() {
	if r.Pgbench.TPS > 0 {
		r.Ratios.IngestToPgbench = r.Ingest.AcceptedPerSec / r.Pgbench.TPS
	}
	batched, best, bestClients := r.Ingest, r.Pgbench.TPS, r.Pgbench.Clients
	if r.IngestMany != nil {
		batched = *r.IngestMany
		best, bestClients = r.bestPgbench()
	}
	var batchedRatio float64
	if best > 0 {
		batchedRatio = batched.AcceptedPerSec / best
	}
	if r.IngestMany != nil {
		r.Ratios.ManyToBestPgbench = batchedRatio
	}
	processed := r.Processing.PerSec
	if r.River.JobsPerSec > 0 {
		r.Ratios.ProcessedToRiver = processed / r.River.JobsPerSec
	}

	errs := r.Ingest.Errors
	if r.IngestMany != nil {
		errs += r.IngestMany.Errors
	}
	var halfP99 duration
	if r.HalfLoad != nil {
		errs += r.HalfLoad.Errors
		halfP99 = r.HalfLoad.Latency.P99
	}
	halfNote := ""
	if r.HalfLoad != nil && r.HalfLoad.TargetRate > r.Ingest.RequestsPerSec {
		halfNote = fmt.Sprintf("%.0f requests/s is more than the %.0f/s the closed loop got through, so the queue grew for the whole phase",
			r.HalfLoad.TargetRate, r.Ingest.RequestsPerSec)
	}
	batchNote := fmt.Sprintf("ingest.batch_window %s; pgbench's best one-transaction rate was %.0f tps, at %d clients",
		r.Options["batch_window"], best, bestClients)
	if b := r.PgbenchBatched; b != nil && best > 0 {
		batchNote += fmt.Sprintf("; the database's own ceiling for batches of %d (pgbench, %d clients) is %.2f× that (%.0f deliveries/s)",
			b.Batch, b.Clients, b.DeliveriesPerSec/best, b.DeliveriesPerSec)
	}
	if r.Options["batch_window"] == "0s" {
		batchNote = "batching was off (ingest.batch_window 0s): run with -batch-window to measure it"
	}
	processedNote := fmt.Sprintf("a worker-only process on the ingest phases' backlog, jobs.batch_size %v", r.Options["process_batch"])
	r.Targets = []target{
		{Name: fmt.Sprintf("ingest accepted/s ÷ pgbench tps, %d connections", r.Ingest.Connections),
			Measured: fmt.Sprintf("%.2f (%.0f / %.0f)", r.Ratios.IngestToPgbench, r.Ingest.AcceptedPerSec, r.Pgbench.TPS),
			Goal:     "≥ 0.80", Met: r.Ratios.IngestToPgbench >= 0.8},
		{Name: "p99 ack latency at half the pgbench rate",
			Measured: halfP99.String(), Goal: "≤ 25ms", Met: r.HalfLoad != nil && r.HalfLoad.Requests > 0 && time.Duration(halfP99) <= 25*time.Millisecond,
			Note: halfNote},
		{Name: "errors (every load phase)", Measured: strconv.FormatInt(errs, 10), Goal: "0", Met: errs == 0},
		{Name: "lost: 202 without its row or job", Measured: strconv.FormatInt(r.Audit.Lost(), 10), Goal: "0",
			Met: r.Audit.Lost() == 0 && r.Audit.IDMismatch == 0 && r.Audit.ExtraJobs == 0},
		{Name: "processed/s ÷ River no-op jobs/s",
			Measured: fmt.Sprintf("%.2f (%.0f / %.0f)", r.Ratios.ProcessedToRiver, processed, r.River.JobsPerSec),
			Goal:     "≥ 0.50", Met: r.Ratios.ProcessedToRiver >= 0.5, Note: processedNote},
		{Name: fmt.Sprintf("RSS under the closed-loop load, %d connections", r.Ingest.Connections), Measured: fmt.Sprintf("%.0f MB", r.RSS.PeakUnderLoadMB),
			Goal: "≤ 150 MB", Met: r.RSS.PeakUnderLoadMB > 0 && r.RSS.PeakUnderLoadMB <= 150},
		{Name: fmt.Sprintf("with batching: ingest accepted/s (%d connections) ÷ best pgbench tps (%d clients)", batched.Connections, bestClients),
			Measured: fmt.Sprintf("%.2f (%.0f / %.0f)", batchedRatio, batched.AcceptedPerSec, best),
			Goal:     "≥ 1.50", Met: batchedRatio >= 1.5, Note: batchNote},
	}
}

func printReport(w io.Writer, r results) {
	conns := fmt.Sprintf("%v", r.Options["concurrency"])
	if r.IngestMany != nil {
		conns += fmt.Sprintf(" and %d", r.IngestMany.Connections)
	}
	printHeader(w, "hookinbox bench", r.runInfo)
	fmt.Fprintf(w, "options   %s phases, %s connections, %.0f%% duplicates, payloads %v–%v B, ingest.batch_window %s, jobs.batch_size %v\n\n",
		r.Options["duration"], conns, 100*r.Options["dup_share"].(float64), r.Options["payload_min"],
		r.Options["payload_max"], r.Options["batch_window"], r.Options["process_batch"])

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "phase\tresult\n")
	fmt.Fprintf(tw, "pgbench, one delivery's transaction\t%.0f tps (%d clients, avg %.1f ms, %d failed, mean payload %d B, client CPU %.1fs)\n",
		r.Pgbench.TPS, r.Pgbench.Clients, r.Pgbench.LatencyAvgMillis, r.Pgbench.Failed, r.Pgbench.MeanPayloadBytes, r.Pgbench.ClientCPUSeconds)
	if m := r.PgbenchMany; m != nil {
		fmt.Fprintf(tw, "pgbench, one delivery's transaction\t%.0f tps (%d clients, avg %.1f ms, %d failed)\n",
			m.TPS, m.Clients, m.LatencyAvgMillis, m.Failed)
	}
	if b := r.PgbenchBatched; b != nil {
		fmt.Fprintf(tw, "pgbench, %d deliveries per transaction\t%.0f deliveries/s (%.0f tps, %d clients, avg %.1f ms, %d failed)\n",
			b.Batch, b.DeliveriesPerSec, b.TPS, b.Clients, b.LatencyAvgMillis, b.Failed)
	}
	printLoad(tw, "ingest, closed loop", r.Ingest)
	if r.IngestBatchMean > 0 {
		fmt.Fprintf(tw, "\t%.1f deliveries per ingest transaction on average\n", r.IngestBatchMean)
	}
	if m := r.IngestMany; m != nil {
		printLoad(tw, "ingest, closed loop", *m)
		if r.IngestManyBatchMean > 0 {
			fmt.Fprintf(tw, "\t%.1f deliveries per ingest transaction on average\n", r.IngestManyBatchMean)
		}
	}
	if r.HalfLoad != nil {
		printLoad(tw, fmt.Sprintf("ingest, open loop at %.0f/s", r.HalfLoad.TargetRate), *r.HalfLoad)
	}
	p := r.Processing
	drained := fmt.Sprintf("all in %s", p.DrainTime)
	if !p.Drained {
		drained = fmt.Sprintf("%d left after %s (wait limit)", p.Remaining, p.DrainTime)
	}
	fmt.Fprintf(tw, "processing (no handler: skipped), worker only\t%.0f processed/s: backlog %d, %s (RSS %.0f MB)\n", p.PerSec, p.Backlog, drained, p.RSSMB)
	fmt.Fprintf(tw, "River no-op jobs (river bench)\t%.0f jobs/s (%d in %s, %d workers)\n",
		r.River.JobsPerSec, r.River.JobsWorked, r.River.Elapsed, r.River.MaxWorkers)
	many := ""
	if m := r.IngestMany; m != nil {
		many = fmt.Sprintf(" (%.0f MB at %d connections)", r.RSS.PeakManyMB, m.Connections)
	}
	fmt.Fprintf(tw, "hookinbox RSS\t%.0f MB peak under load at %d connections%s, %.0f MB VmHWM\n",
		r.RSS.PeakUnderLoadMB, r.Ingest.Connections, many, r.RSS.HighWaterMB)
	a := r.Audit
	fmt.Fprintf(tw, "audit\t%d accepted: %d rows, %d without job, %d id mismatches, %d extra jobs → %d lost\n",
		a.Accepted, a.Rows, a.WithoutJob, a.IDMismatch, a.ExtraJobs, a.Lost())
	fmt.Fprintf(tw, "\t%d inbox rows in all; not yet processed when audited: %d rows, %d jobs\n", a.InboxRows, a.NotProcessed, a.JobsIncomplete)
	tw.Flush()

	printCPU(w, r)
	printStatements(w, r)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\tmeasured\tgoal\t\n")
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Measured, t.Goal, verdict(t.Met))
	}
	tw.Flush()
	for _, t := range r.Targets {
		if t.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", t.Name, t.Note)
		}
	}
	if r.Profile != "" {
		fmt.Fprintf(w, "\nCPU profile of the closed-loop ingest: go tool pprof -top %s\n", r.Profile)
	}
	if r.DrainProfile != "" {
		fmt.Fprintf(w, "CPU profile of processing: go tool pprof -top %s\n", r.DrainProfile)
	}
	fmt.Fprintf(w, "\ntook %s\n", r.Finished.Sub(r.Started).Round(time.Second))
}

// printCPU shows who used the CPUs in each phase, and CPU milliseconds per
// unit of work.
func printCPU(w io.Writer, r results) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "CPU seconds\twall\tbusy\tbench\thookinbox\tpostgres\tirq\tsteal\tother\tautovac\tunits\tpostgres ms/unit\tapp ms/unit\t\n")
	for _, name := range []string{"pgbench", "pgbench_many", "pgbench_batched", "ingest", "ingest_many", "half_load", "drain", "river"} {
		u, ok := r.CPU[name]
		if !ok {
			continue
		}
		var units, app float64
		var unit string
		switch name {
		case "pgbench":
			units, unit, app = float64(r.Pgbench.Transactions), "tx", r.Pgbench.ClientCPUSeconds
		case "pgbench_many":
			units, unit, app = float64(r.PgbenchMany.Transactions), "tx", r.PgbenchMany.ClientCPUSeconds
		case "pgbench_batched":
			units, unit, app = float64(r.PgbenchBatched.Transactions*int64(r.PgbenchBatched.Batch)), "deliveries", r.PgbenchBatched.ClientCPUSeconds
		case "ingest":
			units, unit, app = float64(r.Ingest.Requests), "requests", u.Service
		case "ingest_many":
			units, unit, app = float64(r.IngestMany.Requests), "requests", u.Service
		case "drain":
			units, unit, app = float64(r.Processing.Processed), "processed", u.Service
		case "half_load":
			units, unit, app = float64(r.HalfLoad.Requests), "requests", u.Service
		case "river":
			units, unit, app = float64(r.River.JobsWorked), "jobs", u.Bench
		}
		perPG, perApp := "", ""
		if units > 0 {
			perPG, perApp = fmt.Sprintf("%.3f", 1000*u.Postgres/units), fmt.Sprintf("%.3f", 1000*app/units)
		}
		fmt.Fprintf(tw, "%s\t%.1fs\t%.0f%%\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.0f %s\t%s\t%s\t\n",
			name, u.Seconds, 100*u.MachineBusy, u.Bench, u.Service, u.Postgres, u.IRQ, u.Steal, u.Other, u.AutovacuumRuns, units, unit, perPG, perApp)
	}
	tw.Flush()
	fmt.Fprintln(w, "  app: pgbench's client, hookinbox, or the bench process running River; irq: mostly loopback TCP;")
	fmt.Fprintln(w, "  other: pgbench's client in its phase, otherwise whatever else ran on the machine;")
	fmt.Fprintln(w, "  autovac: autovacuum and autoanalyze runs that finished in the phase (their CPU is in postgres)")
}

func printLoad(tw io.Writer, name string, l loadResult) {
	fmt.Fprintf(tw, "%s\t%.0f accepted/s, %.0f duplicates/s, %d errors (%d requests in %.1fs, %d connections)\n",
		name, l.AcceptedPerSec, l.DuplicatesPerSec, l.Errors, l.Requests, l.Seconds, l.Connections)
	fmt.Fprintf(tw, "\tack p50 %s, p90 %s, p99 %s, max %s\n", l.Latency.P50, l.Latency.P90, l.Latency.P99, l.Latency.Max)
	for _, e := range errorSummary(l.ErrorKinds) {
		fmt.Fprintf(tw, "\t  %s\n", e)
	}
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

// printHeader is the first lines of every scenario's report: what ran,
// when, at which commit, on which machine and server.
func printHeader(w io.Writer, title string, i runInfo) {
	m, db := i.Machine, i.Database
	fmt.Fprintf(w, "\n%s  %s  (%s)\n", title, i.Started.Format(time.RFC3339), m.Commit)
	fmt.Fprintf(w, "machine   %d × %s, %s RAM, load %.2f before / %.2f after",
		m.CPUs, m.CPUModel, m.MemTotal, m.LoadAvg1, m.LoadAvgAfter)
	if m.Writeback != "" {
		fmt.Fprintf(w, ", writeback %s", m.Writeback)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "postgres  %s, fsync %s, synchronous_commit %s, shared_buffers %s",
		db.Version, db.Fsync, db.SynchronousCommit, db.SharedBuffers)
	if db.MaxWALSize != "" {
		fmt.Fprintf(w, ", max_wal_size %s", db.MaxWALSize)
	}
	if db.WALInitZero != "" {
		fmt.Fprintf(w, ", wal_init_zero %s", db.WALInitZero)
	}
	fmt.Fprintln(w)
}

// writeJSON writes a scenario's results, indented, to path.
func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func describeMachine(ctx context.Context, root string) machineInfo {
	m := machineInfo{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAvg1: loadAverage()}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if b := procmem.MachineMemory(); b > 0 {
		m.MemTotal = fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.Writeback = describeWriteback(func(name string) string {
		return strings.TrimSpace(readFile("/proc/sys/vm/" + name))
	})
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	m.Commit = git("rev-parse", "--short", "HEAD")
	// Untracked files do not count: this harness is one while under review.
	if git("status", "--porcelain", "--untracked-files=no") != "" {
		m.Commit += " + uncommitted changes"
	}
	return m
}

// procField is the value of the first "name: value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}
