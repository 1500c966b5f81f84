package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func printKafka(w io.Writer, res kafkaResult) {
	printHeader(w, "kafka", res.runInfo)
	fmt.Fprintf(w, "broker    %s; topics of %d partitions\n", res.Broker, res.Partitions)
	fmt.Fprintln(w, "layout    one hookinbox serve subprocess at a time (role ingest for the intake, role worker for processing and the relay)")
	fmt.Fprintln(w, "          and its PostgreSQL; the broker, the producers and the audit's consumer run in the bench process")
	fmt.Fprintf(w, "traffic   %d messages: GitHub issues bodies (mean %d B), a unique event_id header, type issues, keyed by issue;\n",
		res.Messages, res.MeanPayload)
	fmt.Fprintf(w, "          destination max_in_flight %d, rate_limit 0, key resource, unordered route\n", res.MaxInFlight)
	fmt.Fprintf(w, "pgbench   %.0f tps (one delivery's transaction, %d clients, %v; %s)\n\n",
		res.Pgbench.TPS, res.Pgbench.Clients, res.Options["duration"], pgbenchOther(res.Pgbench, res.PgbenchCPU))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "phase\tresult\n")
	b := res.Bare
	fmt.Fprintf(tw, "bare franz-go producer → kfake\t%.0f messages/s (%d goroutines, ProduceSync: %d in %.1fs, %d errors; p50 %s, p99 %s)\n",
		b.PerSec, b.Goroutines, b.Messages, b.Seconds, b.Errors, b.Latency.P50, b.Latency.P99)
	p := res.Prefill
	fmt.Fprintf(tw, "prefill, batched producer → kfake\t%.0f messages/s (%d in %.1fs, %.0f MB)\n",
		p.PerSec, p.Messages, p.Seconds, float64(p.Bytes)/1e6)
	in := res.Intake
	fmt.Fprintf(tw, "intake, serve --role=ingest\t%.0f messages/s: %d in %.1fs from the first batch to the offsets covering the topic\n",
		in.PerSec, res.Messages, in.Seconds)
	fmt.Fprintf(tw, "\tstart → first batch %s, %.1fs in all; %d transactions, %.0f messages each\n",
		in.StartToFirst, in.WallSeconds, in.Batches, in.MeanBatch)
	pr := res.Processing
	fmt.Fprintf(tw, "processing, serve --role=worker\t%.0f processed/s (%d in %.1fs); %d sends held, the destination paused\n",
		pr.PerSec, pr.Processed, pr.Seconds, pr.Held)
	d := res.Relay
	fmt.Fprintf(tw, "relay, the same worker resumed\t%.0f sends/s: %d attempts in %.1fs, the first's start to the last's end (%.1fs from the resume)\n",
		d.PerSec, d.Attempts, d.Seconds, d.WallSeconds)
	ms := func(d duration) int64 { return time.Duration(d).Milliseconds() }
	fmt.Fprintf(tw, "\tresume took %s; attempt p50 %d ms, p99 %d ms, max %d ms (duration_ms: whole milliseconds)\n",
		d.ResumeTook, ms(d.Latency.P50), ms(d.Latency.P99), ms(d.Latency.Max))
	if len(d.BySecond) > 0 {
		fmt.Fprintf(tw, "\tattempts by second: %s\n", joinInts(d.BySecond))
	}
	a := res.Audit
	fmt.Fprintf(tw, "audit\tinbox %d rows, %d delivery ids; topic %s: %d messages, %d webhook-ids, %d repeated, %d without one\n",
		in.Rows, in.Distinct, kafkaDestTopic, a.Topic.Records, a.Topic.Distinct, a.Topic.Repeated, a.Topic.Missing)
	fmt.Fprintf(tw, "\tsends %d succeeded, %d failed, %d unfinished, %d with retries\n", a.Succeeded, a.Failed, a.Unfinished, a.Retried)
	tw.Flush()

	printKafkaCPU(w, res)

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\tmeasured\tgoal\t\n")
	for _, t := range res.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Measured, t.Goal, verdict(t.Met))
	}
	if tps := res.Pgbench.TPS; tps > 0 {
		fmt.Fprintf(tw, "relay sends/s ÷ pgbench tps\t%.2f (%.0f / %.0f)\t(for scale)\t\n", d.PerSec/tps, d.PerSec, tps)
	}
	if b.PerSec > 0 {
		fmt.Fprintf(tw, "relay sends/s ÷ bare producer messages/s\t%.2f (%.0f / %.0f)\t(for scale)\t\n", d.PerSec/b.PerSec, d.PerSec, b.PerSec)
	}
	tw.Flush()
	printStatementTable(w, "the intake", in.Statements)
	printStatementTable(w, "the relay", d.Statements)
	if res.IntakeProfile != "" {
		fmt.Fprintf(w, "\nCPU profile of serve's intake (its first 5 s): go tool pprof -top %s\n", res.IntakeProfile)
	}
	if res.DrainProfile != "" {
		fmt.Fprintf(w, "CPU profile of the worker's relay (its first 5 s): go tool pprof -top %s\n", res.DrainProfile)
	}
	fmt.Fprintf(w, "\ntook %s\n", res.Finished.Sub(res.Started).Round(time.Second))
}

// joinInts is ns separated by spaces.
func joinInts(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, " ")
}

// printKafkaCPU shows who used the CPUs in each phase, per unit of work.
func printKafkaCPU(w io.Writer, res kafkaResult) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "CPU ms per unit\twall\tbusy\tother\tbench+kfake\thookinbox\tpostgres\tunits\t\n")
	row := func(name string, u cpuUse, units int64, unit string) {
		if units <= 0 || u.Seconds <= 0 {
			return
		}
		n := float64(units)
		fmt.Fprintf(tw, "%s\t%.1fs\t%.0f%%\t%.2f\t%.3f\t%.3f\t%.3f\t%d %s\t\n", name, u.Seconds, 100*u.MachineBusy, u.Other/u.Seconds,
			1000*u.Bench/n, 1000*u.Service/n, 1000*u.Postgres/n, units, unit)
	}
	row("pgbench", res.PgbenchCPU, res.Pgbench.Transactions, "tx")
	row("bare producer", res.Bare.CPU, res.Bare.Messages, "messages")
	row("prefill", res.Prefill.CPU, res.Prefill.Messages, "messages")
	row("intake", res.Intake.CPU, res.Intake.Rows, "messages")
	row("processing", res.Processing.CPU, res.Processing.Processed, "processed")
	row("relay", res.Relay.CPU, res.Relay.Attempts, "sent")
	tw.Flush()
	fmt.Fprintln(w, "  bench+kfake: the broker, the producers and the offsets' polling (one process); other: cores used outside the run")
	fmt.Fprintln(w, "  (pgbench's client in its row); intake and processing from serve's start, relay from the resume, until the work was done")
}
