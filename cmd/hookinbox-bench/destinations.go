package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The destinations scenario (bench/README.md, "Destinations"): one
// `hookinbox serve` sends every GitHub `issues` delivery it processes to a
// receiver in the bench process, compared with a bare client posting the
// same bodies to the same receiver, and ingest's latency with the
// destination at work with the same load on a serve without it.

// destName is the scenario's destination.
const destName = "bench-receiver"

// destSecret makes hookinbox sign every request (Standard Webhooks), as
// a destination with a secret does; the receiver does not check it.
var destSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("hookinbox-bench-receiver"))

// destConfig is the destination and its route: every issues delivery of
// the source, ordered by issue with -dest-ordered; no rate limit unless
// -dest-rate-limit.
const destConfig = `destinations:
  - name: %s
    url: %q
    secret: %q
    max_in_flight: %d
    rate_limit: %.0f
routes:
  - source: github
    events: ["issues"]
    to: [%s]
    ordered: %t
`

// sendsLimit bounds each wait for a destination's sends to finish.
const sendsLimit = 3 * time.Minute

type destinationsResult struct {
	runInfo
	pgbenchBase
	// MaxInFlight is the destination's max_in_flight and the bare
	// client's connections.
	MaxInFlight int `json:"max_in_flight"`
	// RateLimit is the destination's rate_limit, requests/s (0: none).
	RateLimit float64     `json:"rate_limit,omitempty"`
	Signed    bool        `json:"signed"`
	Rate      float64     `json:"rate_per_sec"` // the open loop's, with and without the destination
	Bare      bareResult  `json:"bare_client"`
	BareCPU   cpuUse      `json:"bare_client_cpu"`
	Without   destPhase   `json:"without_destination"`
	With      destPhase   `json:"with_destination"`
	Traffic   destTraffic `json:"drain_under_traffic,omitzero"`
	Drain     destDrain   `json:"backlog_drain"`
	Audit     destAudit   `json:"audit"`
	Profile   string      `json:"drain_profile,omitempty"`
}

// destPhase is the open loop at Rate on one serve, and what followed
// until its deliveries were processed and, with the destination, sent.
type destPhase struct {
	Ingest loadResult `json:"ingest"`
	// CPU is from the load's start until the phase's work was done.
	CPU cpuUse `json:"cpu"`
	// Settled is how long after the load that took.
	Settled duration `json:"settled_after"`
	// SentDuringLoad is the requests the receiver got while the load ran.
	SentDuringLoad int64   `json:"sent_during_load,omitempty"`
	SentPerSec     float64 `json:"sent_per_sec,omitempty"`
	// NewSendsPerSec is the sends the load's deliveries made, per second
	// of the load.
	NewSendsPerSec float64 `json:"new_sends_per_sec,omitempty"`
	// Backlog is what the load left as it ended: deliveries not yet
	// processed and, with the destination, sends not yet sent. Nil in
	// older results files.
	Backlog        *destBacklog `json:"backlog_at_end,omitempty"`
	AckToProcessed rowLatencies `json:"ack_to_processed"`
	// Statements are the database's top statements over the phase
	// (-pg-stats).
	Statements []statementStat `json:"statements,omitempty"`
	// AckToSent is from received_at to the first attempt's start.
	AckToSent *rowLatencies `json:"ack_to_sent,omitempty"`
}

// destBacklog is the work left as a load ended.
type destBacklog struct {
	Unprocessed int64 `json:"unprocessed"`
	Unsent      int64 `json:"unsent,omitempty"`
}

// destDrain is a paused destination's backlog sent after a resume, with
// nothing else running.
type destDrain struct {
	Held int64 `json:"held"`
	// ResumeTook is the resume call: it flips the destination's state.
	ResumeTook duration `json:"resume_took"`
	Requests   int64    `json:"requests"`
	Seconds    float64  `json:"seconds"` // the receiver's first to last request
	PerSec     float64  `json:"requests_per_sec"`
	PeakConns  int64    `json:"peak_connections"` // the receiver's: hookinbox's requests in flight at once, at most
	Drained    bool     `json:"drained"`
	CPU        cpuUse   `json:"cpu"` // from the resume's answer until no send was unfinished
	// Statements are the database's top statements meanwhile (-pg-stats).
	Statements []statementStat `json:"statements,omitempty"`
}

// destAudit checks "one request per delivery": every delivery accepted
// on the serve with the destination was sent once, and no more.
type destAudit struct {
	Accepted   int64 `json:"accepted"`
	Requests   int64 `json:"receiver_requests"`
	Succeeded  int64 `json:"sends_succeeded"`
	Failed     int64 `json:"sends_failed"`
	Unfinished int64 `json:"sends_unfinished"`
	Retried    int64 `json:"sends_with_more_than_one_attempt"`
}

// pgbenchBase is pgbench's one-delivery baseline in a scenario's results:
// the rate its open loop is a fraction of, and the machine's CPU over it.
type pgbenchBase struct {
	Pgbench    pgbenchResult `json:"pgbench"`
	PgbenchCPU cpuUse        `json:"pgbench_cpu"`
}

// setupReceiverRig is setupIssueRig plus the receiver a destination sends
// to, closed with the rig, and pgbench's baseline, into base.
func setupReceiverRig(ctx context.Context, opts options, root string, progress func(string, ...any),
	info *runInfo, base *pgbenchBase) (*rig, []payload, *receiver, error) {
	r, issues, err := setupIssueRig(ctx, opts, root, progress, info)
	if err != nil {
		return nil, nil, nil, err
	}
	recv, err := startReceiver()
	if err != nil {
		r.close()
		return nil, nil, nil, err
	}
	r.cleanup = append(r.cleanup, recv.close)
	if base.Pgbench, base.PgbenchCPU, err = r.pgbenchBaseline(ctx, progress); err != nil {
		r.close()
		return nil, nil, nil, err
	}
	return r, issues, recv, nil
}

func runDestinations(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := destinationsResult{runInfo: newRunInfo(ctx, opts, root, progress), MaxInFlight: opts.destInFlight, Signed: true}
	out := resultsPath(opts, root, res.Started, "destinations")
	r, issues, recv, err := setupReceiverRig(ctx, opts, root, progress, &res.runInfo, &res.pgbenchBase)
	if err != nil {
		return err
	}
	defer r.close()
	res.Rate = opts.destLoad * res.Pgbench.TPS
	res.RateLimit = math.Round(opts.destRate * res.Pgbench.TPS)
	meter := cpuMeter{postmasterPID: r.pg.postmasterPID()}
	d := opts.duration

	r.settle(ctx, progress)
	progress("bare client: %d connections to the receiver, %s", opts.destInFlight, d)
	end := meter.span(ctx, r.pg)
	res.Bare = bareClient(ctx, recv.url, issues, opts.destInFlight, d)
	res.BareCPU = end()
	progress("bare client: %.0f requests/s, %d errors", res.Bare.PerSec, res.Bare.Errors)

	// Without the destination: the same load on a serve that has none.
	plain, err := r.startWith(ctx, serviceOptions{Role: "all", Name: "plain"})
	if err != nil {
		return err
	}
	defer plain.stop()
	progress("without the destination: open loop at %.0f/s, %d connections, %s", res.Rate, opts.concurrency, d)
	gen := newGenerator(plain.webhookURL, "issues", issues, opts.concurrency, opts.dupShare)
	res.Without, err = destRunPhase(ctx, r, plain, gen, nil, res.Rate, nil, progress)
	gen.close()
	if err != nil {
		return err
	}
	if err := plain.stop(); err != nil {
		progress("warning: %v", err)
	}

	progress("with the destination (max_in_flight %d, rate_limit %.0f, signed)", opts.destInFlight, res.RateLimit)
	svc, err := r.startWith(ctx, serviceOptions{Role: "all", Name: "destination",
		Extra: fmt.Sprintf(destConfig, destName, recv.url, destSecret, opts.destInFlight, res.RateLimit, destName, opts.destOrdered)})
	if err != nil {
		return err
	}
	defer svc.stop()
	gen = newGenerator(svc.webhookURL, "issues", issues, opts.concurrency, opts.dupShare)
	defer gen.close()
	bareRequests := recv.total.Load()
	progress("with the destination: open loop at %.0f/s, %d connections, %s", res.Rate, opts.concurrency, d)
	if res.With, err = destRunPhase(ctx, r, svc, gen, recv, res.Rate, nil, progress); err != nil {
		return err
	}

	if res.Traffic, err = destRunUnderTraffic(ctx, r, svc, gen, recv, res.Rate, progress); err != nil {
		return err
	}
	if res.Drain, err = destRunDrain(ctx, r, svc, gen, recv, res.Rate, &res.Profile, out, progress); err != nil {
		return err
	}
	res.Audit.Accepted = int64(len(gen.acks()))
	res.Audit.Requests = recv.total.Load() - bareRequests
	if err := r.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE state = 'failed'),
			count(*) FILTER (WHERE state IN ('waiting', 'pending', 'held')), count(*) FILTER (WHERE attempts > 1)
			FROM destination_send WHERE destination = $1`, destName).
		Scan(&res.Audit.Succeeded, &res.Audit.Failed, &res.Audit.Unfinished, &res.Audit.Retried); err != nil {
		return fmt.Errorf("audit sends: %w", err)
	}

	res.finish()
	printDestinations(os.Stdout, res)
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// destRunPhase runs the open loop at rate on svc and waits until its
// deliveries are processed and, with a receiver, sent. loading, if not
// nil, is called as the load starts.
func destRunPhase(ctx context.Context, r *rig, svc *service, gen *generator, recv *receiver, rate float64,
	loading func(), progress func(string, ...any)) (destPhase, error) {
	var p destPhase
	db := r.db
	// Each phase starts with the tables vacuumed and analyzed, so that
	// neither pays for what the one before left. The phase with the
	// destination still has autovacuum runs of its own (12 in 20 s: the
	// sends' rows are updated twice each, the state row on every claim).
	if _, err := db.Exec(ctx, "VACUUM (ANALYZE)"); err != nil {
		return p, fmt.Errorf("vacuum before the phase: %w", err)
	}
	r.settle(ctx, progress)
	from, err := maxInboxID(ctx, db)
	if err != nil {
		return p, err
	}
	meter := cpuMeter{servicePID: svc.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}
	if recv != nil {
		recv.reset()
	}
	stats := statementStats{enabled: r.opts.pgStats, db: db}
	stats.reset(ctx)
	end := meter.span(ctx, r.pg, r.svcURL)
	if loading != nil {
		loading()
	}
	p.Ingest = gen.openLoop(ctx, rate, r.opts.duration)
	loaded := time.Now()
	if recv != nil {
		p.SentDuringLoad = recv.requests.Load()
		p.SentPerSec = float64(p.SentDuringLoad) / p.Ingest.Seconds
	}
	var left destBacklog
	if left.Unprocessed, err = countReceived(ctx, db); err != nil {
		return p, err
	}
	if recv != nil {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM `+unsentSends, destName).Scan(&left.Unsent); err != nil {
			return p, err
		}
	}
	p.Backlog = &left
	to, err := maxInboxID(ctx, db)
	if err != nil {
		return p, err
	}
	done, err := waitWorkedOff(ctx, db, recv != nil)
	if err != nil {
		return p, err
	}
	if !done {
		progress("warning: deliveries still unprocessed or unsent %s after the load; the latencies count them as done now", sendsLimit)
	}
	p.Settled = duration(time.Since(loaded))
	p.CPU = end()
	p.Statements = stats.read(ctx)
	if p.AckToProcessed, err = readRowLatencies(ctx, db, ackToProcessed, from, to); err != nil {
		return p, err
	}
	if recv != nil {
		var made int64
		if err := db.QueryRow(ctx, `SELECT count(*) FROM destination_send WHERE inbox_id > $1 AND inbox_id <= $2`, from, to).Scan(&made); err != nil {
			return p, err
		}
		p.NewSendsPerSec = float64(made) / p.Ingest.Seconds
		sent, err := readRowLatencies(ctx, db, ackToSent, from, to)
		if err != nil {
			return p, err
		}
		p.AckToSent = &sent
	}
	return p, nil
}

// ackToSent is from received_at to the start of the first request for
// the send of each row with ids in ($1, $2].
const ackToSent = `SELECT extract(epoch FROM a.attempted_at - i.received_at)::float8
	FROM inbox i JOIN destination_send s ON s.inbox_id = i.id JOIN destination_attempt a ON a.send_id = s.id AND a.attempt = 1
	WHERE i.id > $1 AND i.id <= $2`

// destRunDrain pauses the destination, lets the same load pile its sends
// up (pending, unclaimed), and measures how fast they go once it is resumed, with
// nothing else running.
func destRunDrain(ctx context.Context, r *rig, svc *service, gen *generator, recv *receiver, rate float64,
	profile *string, out string, progress func(string, ...any)) (destDrain, error) {
	var dr destDrain
	db, d := r.db, r.opts.duration
	path := "/admin/destinations/" + destName
	if err := svc.adminPost(ctx, path+"/pause"); err != nil {
		return dr, err
	}
	progress("backlog: destination paused, open loop at %.0f/s for %s", rate, d)
	load := gen.openLoop(ctx, rate, d)
	if load.Errors > 0 {
		progress("warning: %d errors while the backlog was made", load.Errors)
	}
	processed, err := waitWorkedOff(ctx, db, false)
	if err != nil {
		return dr, err
	}
	if !processed {
		progress("warning: not every delivery was processed %s after the load; the drain starts anyway", sendsLimit)
	}
	// A paused destination's sends wait unclaimed (pending, or waiting their turn).
	if err = db.QueryRow(ctx, `SELECT count(*) FROM `+unsentSends, destName).Scan(&dr.Held); err != nil {
		return dr, err
	}
	r.settle(ctx, progress)
	recv.reset()
	progress("backlog: resuming %d held sends", dr.Held)
	t0 := time.Now()
	if err := svc.adminPost(ctx, path+"/resume"); err != nil {
		return dr, err
	}
	dr.ResumeTook = duration(time.Since(t0))
	meter := cpuMeter{servicePID: svc.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}
	stats := statementStats{enabled: r.opts.pgStats, db: db}
	stats.reset(ctx)
	end := meter.span(ctx, r.pg, r.svcURL)
	profiled := make(chan error, 1)
	if r.opts.profile {
		*profile = strings.TrimSuffix(out, ".json") + ".drain.pprof"
		go func() { profiled <- svc.cpuProfile(ctx, d/2, *profile) }()
	} else {
		profiled <- nil
	}
	// Polling the database during the drain took 30 ms a poll, a quarter
	// of the drain's statement time: the receiver's count says when the
	// last held send went out, and only then is the database asked.
	_, _ = waitUntil(ctx, sendsLimit, func() (bool, error) { return recv.requests.Load() >= dr.Held, nil })
	dr.Drained, err = waitWorkedOff(ctx, db, true)
	if err != nil {
		return dr, err
	}
	dr.CPU = end()
	dr.Statements = stats.read(ctx)
	if err := <-profiled; err != nil {
		progress("warning: %v", err)
		*profile = ""
	}
	dr.Requests, dr.PeakConns = recv.requests.Load(), recv.peakConns.Load()
	dr.Seconds = recv.window().Seconds()
	if dr.Seconds > 0 {
		dr.PerSec = float64(dr.Requests) / dr.Seconds
	}
	progress("backlog: %d requests in %.1fs, %.0f/s (resume took %s)", dr.Requests, dr.Seconds, dr.PerSec, dr.ResumeTook)
	return dr, nil
}

// waitWorkedOff waits, at most sendsLimit, until no delivery is
// `received` and, with sends, no send of the destination is waiting or
// pending; it reports whether that happened.
func waitWorkedOff(ctx context.Context, db *pgxpool.Pool, sends bool) (bool, error) {
	return waitUntil(ctx, sendsLimit, func() (bool, error) {
		if ok, err := noneReceived(ctx, db); !ok || err != nil || !sends {
			return ok, err
		}
		left, err := sendsLeft(ctx, db)
		return !left, err
	})
}

// unsentSends is the destination's sends not yet sent: pending, and on
// an ordered route waiting behind their resource's send in progress.
const unsentSends = `destination_send WHERE destination = $1 AND state IN ('pending', 'waiting')`

// sendsLeft reports whether a send of the destination is still waiting
// or pending. Polling must not become the load it
// measures: counting the unfinished sends every 100 ms took 4.6 ms of the
// database's time per poll while thousands were left (4% of a drain's
// statement time); this stops at the first, found through the partial
// indexes of pending and of waiting sends (one literal state each).
func sendsLeft(ctx context.Context, db *pgxpool.Pool) (bool, error) {
	q := `SELECT EXISTS (SELECT 1 FROM destination_send WHERE destination = $1 AND state = 'pending')
		OR EXISTS (SELECT 1 FROM destination_send WHERE destination = $1 AND state = 'waiting')`
	var left bool
	err := db.QueryRow(ctx, q, destName).Scan(&left)
	return left, err
}

// routeOrder names the route's order: results files written before
// -dest-ordered have none, and were unordered.
func routeOrder(options map[string]any) string {
	if ordered, _ := options["dest_ordered"].(bool); ordered {
		return "ordered"
	}
	return "unordered"
}

func printDestinations(w io.Writer, res destinationsResult) {
	printHeader(w, "destinations", res.runInfo)
	fmt.Fprintf(w, "traffic   GitHub issues (payloads %v–%v B), %.0f%% duplicates; the destination: max_in_flight %d, rate_limit %.0f, signed (secret), route issues, %s\n",
		res.Options["payload_min"], res.Options["payload_max"], 100*res.Options["dup_share"].(float64), res.MaxInFlight, res.RateLimit, routeOrder(res.Options))
	fmt.Fprintf(w, "pgbench   %.0f tps (one delivery's transaction, %d clients; %s); open loops at %.0f/s (%.2f×), %v connections, %v\n\n",
		res.Pgbench.TPS, res.Pgbench.Clients, pgbenchOther(res.Pgbench, res.PgbenchCPU), res.Rate, res.Options["dest_load"],
		res.Options["concurrency"], res.Options["duration"])

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "phase\tresult\n")
	b := res.Bare
	fmt.Fprintf(tw, "bare fasthttp client → receiver\t%.0f requests/s (%d connections, %d in %.1fs, %d errors, p99 %s)\n",
		b.PerSec, b.Connections, b.Requests, b.Seconds, b.Errors, b.P99)
	for _, ph := range []struct {
		name string
		p    destPhase
	}{{"serve without the destination", res.Without}, {"serve with the destination", res.With}} {
		l := ph.p.Ingest
		fmt.Fprintf(tw, "%s\t%.0f answered/s, %d errors; ack p50 %s, p99 %s, max %s\n",
			ph.name, l.RequestsPerSec, l.Errors, l.Latency.P50, l.Latency.P99, l.Latency.Max)
		fmt.Fprintf(tw, "\t→processed p50 %s, p99 %s; all done %s after the load\n",
			ph.p.AckToProcessed.P50, ph.p.AckToProcessed.P99, ph.p.Settled)
		if s := ph.p.AckToSent; s != nil {
			fmt.Fprintf(tw, "\t%.0f sent/s during the load; →sent p50 %s, p99 %s (%d sends)\n", ph.p.SentPerSec, s.P50, s.P99, s.Rows)
		}
	}
	printDestTraffic(tw, res.Traffic)
	dr := res.Drain
	fmt.Fprintf(tw, "backlog of a paused destination, nothing else running\t%d held; resume took %s; %d requests in %.1fs: %.0f/s, at most %d connections open\n",
		dr.Held, dr.ResumeTook, dr.Requests, dr.Seconds, dr.PerSec, dr.PeakConns)
	a := res.Audit
	fmt.Fprintf(tw, "audit\t%d accepted; %d requests received; sends %d succeeded, %d failed, %d unfinished, %d with retries\n",
		a.Accepted, a.Requests, a.Succeeded, a.Failed, a.Unfinished, a.Retried)
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "CPU ms per unit\twall\tbusy\tother\tbench\thookinbox\tpostgres\tunits\t\n")
	row := func(name string, u cpuUse, units float64, unit string) {
		if units <= 0 {
			return
		}
		fmt.Fprintf(tw, "%s\t%.1fs\t%.0f%%\t%.2f\t%.3f\t%.3f\t%.3f\t%.0f %s\t\n", name, u.Seconds, 100*u.MachineBusy, u.Other/u.Seconds,
			1000*u.Bench/units, 1000*u.Service/units, 1000*u.Postgres/units, units, unit)
	}
	row("bare client", res.BareCPU, float64(b.Requests), "requests")
	row("without the destination", res.Without.CPU, float64(res.Without.Ingest.Requests), "requests")
	row("with the destination", res.With.CPU, float64(res.With.Ingest.Requests), "requests")
	row("under traffic, paused", res.Traffic.PausedCPU, float64(res.Traffic.Paused.Requests), "requests")
	row("under traffic, draining", res.Traffic.DrainingCPU, float64(res.Traffic.Draining.Requests), "requests")
	row("backlog drain", dr.CPU, float64(dr.Requests), "sent")
	tw.Flush()
	fmt.Fprintln(w, "  bench: the load generator, the receiver and the bare client (one process); other: cores used outside the run;")
	fmt.Fprintln(w, "  each phase's CPU runs until its work was done (processed, and sent)")

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\tmeasured\tgoal\t\n")
	printDestTargets(tw, res)
	if b.PerSec > 0 {
		ratio := dr.PerSec / b.PerSec
		fmt.Fprintf(tw, "destination sent/s (backlog, nothing else running) ÷ bare client requests/s\t%.2f (%.0f / %.0f)\t(for scale)\t\n",
			ratio, dr.PerSec, b.PerSec)
		fmt.Fprintf(tw, "destination sent/s (at %.0f/s offered) ÷ bare client requests/s\t%.2f (%.0f / %.0f)\t(bounded by the load)\t\n",
			res.Rate, res.With.SentPerSec/b.PerSec, res.With.SentPerSec, b.PerSec)
	}
	if p99 := time.Duration(res.Without.Ingest.Latency.P99); p99 > 0 {
		ratio := float64(res.With.Ingest.Latency.P99) / float64(p99)
		fmt.Fprintf(tw, "ingest ack p99 with ÷ without the destination\t%.2f (%s / %s)\t(for scale)\t\n",
			ratio, res.With.Ingest.Latency.P99, res.Without.Ingest.Latency.P99)
	}
	tw.Flush()
	printStatementTable(w, "the open loop without the destination", res.Without.Statements)
	printStatementTable(w, "the open loop with the destination", res.With.Statements)
	printStatementTable(w, "the backlog sent under traffic", res.Traffic.Statements)
	printStatementTable(w, "sending the backlog", dr.Statements)
	if len(res.Traffic.PGSamples) > 0 {
		fmt.Fprintln(w, "\nserver counters, the backlog sent under traffic (-pg-sample)")
		printPGSamples(w, res.Traffic.PGSamples)
	}
	if res.Profile != "" {
		fmt.Fprintf(w, "\nCPU profile of serve sending the backlog: go tool pprof -top %s\n", res.Profile)
	}
	fmt.Fprintf(w, "\ntook %s\n", res.Finished.Sub(res.Started).Round(time.Second))
}
