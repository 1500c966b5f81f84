package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// destTraffic is a paused destination's backlog sent while the same
// traffic goes on: the open loop runs with the destination paused, then
// again from its resume on, with no pause between the two.
type destTraffic struct {
	Paused   loadResult `json:"paused"`
	Draining loadResult `json:"draining"`
	// Held is the sends unsent at the resume (pending, and on an ordered
	// route waiting behind their resource's send in progress), all of ids
	// ≤ HeldUpTo.
	Held     int64 `json:"held"`
	HeldUpTo int64 `json:"held_up_to_id"`
	// DrainedAfter is from the resume until no held send was left
	// unsent; 0 when some still were as the loop ended.
	DrainedAfter duration `json:"drained_after"`
	// Sent is the receiver's requests, held and new, from the resume
	// until DrainedAfter (or the loop's end).
	Sent       int64   `json:"sent"`
	SentPerSec float64 `json:"sent_per_sec"`
	// LoopSent is the receiver's requests over the whole second loop.
	LoopSent int64 `json:"loop_sent"`
	// LeftAtEnd is the sends unsent as the second loop ended, held and
	// new: below Held only if sending outpaced the traffic's new sends.
	LeftAtEnd int64 `json:"left_at_end"`
	// CPU is over each loop.
	PausedCPU   cpuUse `json:"paused_cpu"`
	DrainingCPU cpuUse `json:"draining_cpu"`
	// Statements are the database's top statements over the second
	// loop (-pg-stats).
	Statements []statementStat `json:"statements,omitempty"`
	// PGSamples are the server's counters every -pg-sample over the
	// second loop.
	PGSamples []pgSample `json:"pg_samples,omitempty"`
}

// destRunUnderTraffic pauses the destination, runs the open loop at rate
// for the run's duration, resumes it as a second loop starts and runs
// that one for the same duration, then waits until everything is sent.
func destRunUnderTraffic(ctx context.Context, r *rig, svc *service, gen *generator, recv *receiver, rate float64,
	progress func(string, ...any)) (destTraffic, error) {
	var tr destTraffic
	db, d := r.db, r.opts.duration
	path := "/admin/destinations/" + destName
	meter := cpuMeter{servicePID: svc.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}
	if err := svc.adminPost(ctx, path+"/pause"); err != nil {
		return tr, err
	}
	progress("under traffic: destination paused, open loop at %.0f/s for %s", rate, d)
	end := meter.span(ctx, r.pg, r.svcURL)
	tr.Paused = gen.openLoop(ctx, rate, d)
	tr.PausedCPU = end()

	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(max(id), 0) FROM `+unsentSends,
		destName).Scan(&tr.Held, &tr.HeldUpTo); err != nil {
		return tr, err
	}
	progress("under traffic: resuming %d held sends as the open loop goes on for %s", tr.Held, d)
	recv.reset()
	stats := statementStats{enabled: r.opts.pgStats, db: db}
	stats.reset(ctx)
	end = meter.span(ctx, r.pg, r.svcURL)
	resumed := time.Now()
	resumeErr := make(chan error, 1)
	go func() { resumeErr <- svc.adminPost(ctx, path+"/resume") }()
	drained := make(chan time.Duration, 1)
	watchCtx, stopWatch := context.WithCancel(ctx)
	go func() { drained <- watchHeld(watchCtx, r, tr.HeldUpTo, resumed, recv, &tr.Sent) }()
	sampled := sampleDuring(ctx, db, r.opts.pgSample, progress)
	tr.Draining = gen.openLoop(ctx, rate, d)
	tr.PGSamples = sampled()
	tr.DrainingCPU = end()
	tr.LoopSent = recv.requests.Load()
	tr.Statements = stats.read(ctx)
	stopWatch()
	tr.DrainedAfter = duration(<-drained)
	if err := db.QueryRow(ctx, `SELECT count(*) FROM `+unsentSends,
		destName).Scan(&tr.LeftAtEnd); err != nil {
		return tr, err
	}
	if err := <-resumeErr; err != nil {
		return tr, err
	}
	secs := time.Duration(tr.DrainedAfter).Seconds()
	if tr.DrainedAfter == 0 {
		tr.Sent, secs = tr.LoopSent, tr.Draining.Seconds
	}
	if secs > 0 {
		tr.SentPerSec = float64(tr.Sent) / secs
	}
	if tr.DrainedAfter == 0 {
		progress("under traffic: %d requests, %.0f/s; held backlog not all sent as the loop ended (%d unsent)", tr.Sent, tr.SentPerSec, tr.LeftAtEnd)
	} else {
		progress("under traffic: %d requests, %.0f/s, held backlog drained after %s", tr.Sent, tr.SentPerSec, tr.DrainedAfter)
	}
	if done, err := waitWorkedOff(ctx, db, true); err != nil || !done {
		return tr, fmt.Errorf("sends still unfinished %s after the loop (%v)", sendsLimit, err)
	}
	return tr, nil
}

// watchHeld polls, until ctx ends, for the first moment no send of id ≤
// upTo is unsent, and returns how long after resumed that was (0: not
// within ctx), with the receiver's requests by then in sent. The held
// sends are the oldest due, so the check stops at the first while any is
// left; an ordered route's held sends waiting their turn are looked for
// only once no held one is due.
func watchHeld(ctx context.Context, r *rig, upTo int64, resumed time.Time, recv *receiver, sent *int64) time.Duration {
	// The first pending send in the sender's own order (the due index):
	// a filter on id instead made the planner walk the primary key past
	// every held send already sent, 53 ms a poll, half the database's
	// time in the loop.
	const q = `SELECT CASE WHEN coalesce((SELECT id FROM destination_send WHERE destination = $1 AND state = 'pending'
		ORDER BY next_attempt_at, id LIMIT 1) <= $2, false) THEN true
		ELSE EXISTS (SELECT 1 FROM destination_send WHERE destination = $1 AND state = 'waiting' AND id <= $2) END`
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
		var left bool
		if err := r.db.QueryRow(ctx, q, destName, upTo).Scan(&left); err != nil {
			continue
		}
		if !left {
			*sent = recv.requests.Load()
			return time.Since(resumed)
		}
	}
}

// printDestTraffic is the phase's line in the table of phases.
func printDestTraffic(tw io.Writer, tr destTraffic) {
	fmt.Fprintf(tw, "under traffic, destination paused\t%.0f answered/s, %d errors; ack p50 %s, p99 %s, max %s\n",
		tr.Paused.RequestsPerSec, tr.Paused.Errors, tr.Paused.Latency.P50, tr.Paused.Latency.P99, tr.Paused.Latency.Max)
	fmt.Fprintf(tw, "under traffic, draining after the resume\t%.0f answered/s, %d errors; ack p50 %s, p99 %s, max %s\n",
		tr.Draining.RequestsPerSec, tr.Draining.Errors, tr.Draining.Latency.P50, tr.Draining.Latency.P99, tr.Draining.Latency.Max)
	drained := "not drained by the loop's end"
	if tr.DrainedAfter > 0 {
		drained = fmt.Sprintf("drained after %s", tr.DrainedAfter)
	}
	fmt.Fprintf(tw, "\t%d held; %s; %d requests meanwhile, %.0f/s; %d unsent as the loop ended\n",
		tr.Held, drained, tr.Sent, tr.SentPerSec, tr.LeftAtEnd)
}

// printDestTargets is the goals for sending under load, each a
// ratio of one run.
func printDestTargets(tw io.Writer, res destinationsResult) {
	w, tr := res.With, res.Traffic
	if w.NewSendsPerSec > 0 {
		ratio := w.SentPerSec / w.NewSendsPerSec
		fmt.Fprintf(tw, "sent/s ÷ new sends/s, steady at %.2f× pgbench\t%.2f (%.0f / %.0f)\t≥ 0.95\t%s\n",
			res.Options["dest_load"], ratio, w.SentPerSec, w.NewSendsPerSec, verdict(ratio >= 0.95))
	}
	if p99 := time.Duration(tr.Paused.Latency.P99); p99 > 0 {
		ratio := float64(tr.Draining.Latency.P99) / float64(p99)
		fmt.Fprintf(tw, "ingest ack p99 draining ÷ paused, same traffic\t%.2f (%s / %s)\t≤ 1.30\t%s\n",
			ratio, tr.Draining.Latency.P99, tr.Paused.Latency.P99, verdict(ratio <= 1.3))
	}
	if paused := medianSecondP99(tr.Paused); paused > 0 {
		draining := medianSecondP99(tr.whileDraining())
		ratio := float64(draining) / float64(paused)
		fmt.Fprintf(tw, "ingest ack: median second's p99, draining ÷ paused\t%.2f (%s / %s)\t(reported)\t\n",
			ratio, draining, paused)
	}
	if res.Pgbench.TPS > 0 {
		ratio := tr.SentPerSec / res.Pgbench.TPS
		fmt.Fprintf(tw, "sent/s draining under traffic ÷ pgbench tps\t%.2f (%.0f / %.0f)\t≥ 1.00\t%s\n",
			ratio, tr.SentPerSec, res.Pgbench.TPS, verdict(ratio >= 1.0))
	}
	if l, ok := cpuLeftByTraffic(tr, res.Machine.CPUs); ok {
		ratio := tr.SentPerSec / l.carries
		fmt.Fprintf(tw, "sent/s draining under traffic ÷ the sends the CPU the traffic leaves carries\t%.2f (%.0f / %.0f: %.2f cores left, %.3f ms a send)\t(reported)\t\n",
			ratio, tr.SentPerSec, l.carries, l.cores, l.perSendMs)
	}
	if tr.LoopSent > 0 && tr.PausedCPU.Seconds > 0 {
		extra := tr.DrainingCPU.Postgres - tr.PausedCPU.Postgres/tr.PausedCPU.Seconds*tr.DrainingCPU.Seconds
		fmt.Fprintf(tw, "PostgreSQL CPU per sent request, draining under traffic (beyond the paused loop's)\t%.3f ms\t(reported)\t\n",
			1000*extra/float64(tr.LoopSent))
	}
}

// cpuLeft is what a drain under traffic can use: the cores the paused
// loop leaves idle, and the machine's CPU (everything that ran) per send
// beyond the paused loop's, which together say how many sends a second
// those cores carry.
type cpuLeft struct {
	cores     float64
	perSendMs float64
	carries   float64
}

// cpuLeftByTraffic is cpuLeft of one run on a machine of cpus. ok is
// false when the run has no draining loop or no CPU to compare.
func cpuLeftByTraffic(tr destTraffic, cpus int) (cpuLeft, bool) {
	p, d := tr.PausedCPU, tr.DrainingCPU
	if cpus <= 0 || tr.LoopSent <= 0 || p.Seconds <= 0 || d.Seconds <= 0 || d.MachineBusy <= p.MachineBusy {
		return cpuLeft{}, false
	}
	n := float64(cpus)
	extraMs := 1000 * (d.MachineBusy - p.MachineBusy) * n * d.Seconds
	l := cpuLeft{cores: (1 - p.MachineBusy) * n, perSendMs: extraMs / float64(tr.LoopSent)}
	l.carries = 1000 * l.cores / l.perSendMs
	return l, true
}

// whileDraining is the second loop up to the second in which the held
// backlog was drained: the seconds after it run with no backlog.
func (tr destTraffic) whileDraining() loadResult {
	l := tr.Draining
	if tr.DrainedAfter > 0 {
		n := int(time.Duration(tr.DrainedAfter).Seconds()) + 1
		l.SecondP99 = l.SecondP99[:min(n, len(l.SecondP99))]
	}
	return l
}
