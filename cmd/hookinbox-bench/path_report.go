package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

func printPath(w io.Writer, res pathResult) {
	printHeader(w, "path: the machine's CPU per forwarded delivery against pgbench's per transaction", res.runInfo)
	fmt.Fprintf(w, "traffic   signed GitHub issues (payloads %v–%v B), open loop, %.0f%% duplicates, processed by the shipped handlers; each sent on one unordered route (max_in_flight %v, signed) to a receiver in the bench process\n",
		res.Options["payload_min"], res.Options["payload_max"], 100*res.Options["dup_share"].(float64), res.Options["dest_in_flight"])
	fmt.Fprintf(w, "pgbench   %.0f tps (one delivery's transaction, %d clients; %s): %.3f ms of the machine's CPU a transaction (client %.3f + PostgreSQL %.3f)\n",
		res.Pgbench.TPS, res.Pgbench.Clients, pgbenchOther(res.Pgbench, res.PgbenchCPU), pgbenchTxMs(res.Pgbench, res.PgbenchCPU),
		perRequestMs(res.Pgbench.ClientCPUSeconds, res.Pgbench.Transactions), perRequestMs(res.PgbenchCPU.Postgres, res.Pgbench.Transactions))
	fmt.Fprintf(w, "layout    one default serve (role all) on the run's embedded PostgreSQL (pg_stat_statements loaded); the load generator and the receiver in the bench process; %d cores\n\n",
		res.Machine.CPUs)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load\trate\tanswered/s\tnew/s\tsent/s\terrors\tack p50\tack p99\t→sent p50\t→sent p99\tleft: rows\tsends\tcleared after\tforwarded\tbusy\tother\t\n")
	for _, st := range res.Steps {
		l := st.Ingest
		var sentP50, sentP99 duration
		if st.AckToSent != nil {
			sentP50, sentP99 = st.AckToSent.P50, st.AckToSent.P99
		}
		var left destBacklog
		if st.Backlog != nil {
			left = *st.Backlog
		}
		fmt.Fprintf(tw, "%.2f×\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%.0f%%\t%.2f\t\n",
			st.Load, st.Rate, l.RequestsPerSec, l.AcceptedPerSec, st.SentPerSec, l.Errors, l.Latency.P50, l.Latency.P99,
			sentP50, sentP99, left.Unprocessed, left.Unsent, st.Settled, st.Forwarded, 100*st.CPU.MachineBusy, st.CPU.Other/st.CPU.Seconds)
	}
	tw.Flush()
	fmt.Fprintln(w, "  new/s: accepted deliveries; sent/s: the receiver's requests during the load; left: unprocessed deliveries and unsent sends as the load ended, all sent after `cleared after`")
	fmt.Fprintln(w, "  other: cores used outside the run (the machine is shared)")

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load\tserve ms\tpostgres ms\tmachine ms\tload generator ms\tpgbench at rate ms/tx\t÷ pgbench\t÷ pgbench at rate\t\n")
	full := pgbenchTxMs(res.Pgbench, res.PgbenchCPU)
	for _, st := range res.Steps {
		c := st.forwardedCost()
		atRate := pgbenchTxMs(st.PgbenchAtRate, st.PgbenchAtRateCPU)
		fmt.Fprintf(tw, "%.2f×\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t\n", st.Load, c.ServeMs, c.PostgresMs, c.machineMs(), c.BenchMs,
			atRate, st.ratioTo(full), st.ratioTo(atRate))
	}
	tw.Flush()
	fmt.Fprintln(w, "  CPU per forwarded delivery, from the load's start until every delivery was sent; machine: serve + PostgreSQL;")
	fmt.Fprintln(w, "  load generator: the bench process (generator and receiver); pgbench: its client + PostgreSQL per transaction")

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\tmeasured\tgoal\t\n")
	for _, st := range res.Steps {
		ratio := st.ratioTo(full)
		fmt.Fprintf(tw, "machine CPU per forwarded delivery ÷ per pgbench transaction, %.2f×\t%.2f (%.3f / %.3f ms)\t≤ %.1f\t%s\n",
			st.Load, ratio, st.forwardedCost().machineMs(), full, pathGoal, verdict(ratio > 0 && ratio <= pathGoal))
	}
	tw.Flush()

	for _, st := range res.Steps {
		label := fmt.Sprintf("%.2f×", st.Load)
		printProfileStages(w, label, st.ProfileStages, st.forwardedCost().ServeMs)
		printProfileTop(w, label, st.ProfileTop, st.forwardedCost().ServeMs)
		printPathStatements(w, label, st.Statements, st.Forwarded)
		if st.Profile != "" {
			fmt.Fprintf(w, "CPU profile of serve, %s: go tool pprof -top %s\n", label, st.Profile)
		}
	}
	fmt.Fprintf(w, "\ntook %s\n", res.Finished.Sub(res.Started).Round(time.Second))
}

// printProfileTop prints a profile's heaviest functions by flat and by
// cumulative time, each with its share of the profile and that share of
// serve's measured CPU per forwarded delivery (serveMs).
func printProfileTop(w io.Writer, label string, top *profileTop, serveMs float64) {
	if top == nil || top.SampleSeconds <= 0 {
		return
	}
	for _, by := range []struct {
		name  string
		funcs []profileFunc
	}{{"flat", top.Flat}, {"cum", top.Cum}} {
		fmt.Fprintf(w, "\nserve's CPU profile, %s, top %d by %s (%.2fs of samples; µs: that share of serve's %.3f ms per forwarded delivery)\n",
			label, len(by.funcs), by.name, top.SampleSeconds, serveMs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "flat\tflat%%\tflat µs\tcum\tcum%%\tcum µs\t function\n")
		for _, f := range by.funcs {
			fs, cs := f.FlatS/top.SampleSeconds, f.CumS/top.SampleSeconds
			fmt.Fprintf(tw, "%.2fs\t%.1f%%\t%.1f\t%.2fs\t%.1f%%\t%.1f\t %s\n", f.FlatS, 100*fs, 1000*fs*serveMs, f.CumS, 100*cs, 1000*cs*serveMs, f.Name)
		}
		tw.Flush()
	}
}

// printProfileStages prints serve's profile by stage of the path, each
// with its share of serve's CPU per forwarded delivery (serveMs); a part
// of a stage is indented under it.
func printProfileStages(w io.Writer, label string, stages []profileStage, serveMs float64) {
	var total float64
	for _, s := range stages {
		if s.Within == "" {
			total += s.Seconds
		}
	}
	if total <= 0 {
		return
	}
	fmt.Fprintf(w, "\nserve's CPU profile, %s, by stage (a sample in the first stage whose function it holds; µs: that share of serve's %.3f ms per forwarded delivery)\n",
		label, serveMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "seconds\tshare\tµs\t stage\n")
	for _, s := range stages {
		name := s.Name
		if s.Within != "" {
			name = "  " + name
		}
		share := s.Seconds / total
		fmt.Fprintf(tw, "%.2f\t%.1f%%\t%.1f\t %s\n", s.Seconds, 100*share, 1000*share*serveMs, name)
	}
	tw.Flush()
}

// printPathStatements prints the step's statements by database time, each
// per forwarded delivery too.
func printPathStatements(w io.Writer, label string, top []statementStat, forwarded int64) {
	if len(top) == 0 {
		return
	}
	fmt.Fprintf(w, "\nstatements by database time, %s (pg_stat_statements: time in the executor, waits included; per forwarded delivery)\n", label)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "total ms\tµs/delivery\tcalls\tcalls/delivery\tmean ms\trows/call\tWAL B/call\t query\n")
	for _, st := range top {
		fmt.Fprintf(tw, "%.0f\t%.1f\t%d\t%.3f\t%.3f\t%.1f\t%.0f\t %s\n", st.TotalMs, 1000*perRequest(st.TotalMs, forwarded),
			st.Calls, perRequest(float64(st.Calls), forwarded), st.MeanMs, st.RowsPerCal, st.WALPerCall, shortQuery(st.Query, 100))
	}
	tw.Flush()
}
