package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The kafka scenario (bench/README.md, "Kafka"): a Kafka source's intake
// of a pre-filled topic and a Kafka destination's drain of a backlog of
// sends, each against pgbench's one-delivery transaction, with a bare
// franz-go producer beside the drain for scale. The broker is franz-go's
// kfake, inside the bench process: a Kafka-protocol cluster that keeps
// its messages in memory, not a Kafka broker, whose figures differ.

// The scenario's names: the source reads kafkaSourceTopic in group
// kafkaGroup, and routes every issues event to destination kafkaDestName,
// which writes to "hookinbox.{source}", kafkaDestTopic.
const (
	kafkaSource      = "events"
	kafkaSourceTopic = "events"
	kafkaGroup       = "hookinbox-events"
	kafkaDestName    = "bench-kafka"
	kafkaDestTopic   = "hookinbox." + kafkaSource
	kafkaBareTopic   = "bare.events"
)

// kafkaBrokerNote is what the figures were measured against.
const kafkaBrokerNote = "kfake (franz-go's Kafka-protocol fake, in memory) in the bench process, one broker; not a Kafka broker: a real one's figures differ"

type kafkaResult struct {
	runInfo
	Broker      string `json:"broker"`
	Messages    int    `json:"messages"`
	Partitions  int    `json:"partitions"`
	MaxInFlight int    `json:"max_in_flight"` // the destination's, and the bare producer's goroutines
	MeanPayload int    `json:"mean_payload_bytes"`

	Pgbench    pgbenchResult   `json:"pgbench"`
	PgbenchCPU cpuUse          `json:"pgbench_cpu"`
	Bare       kafkaBare       `json:"bare_producer"`
	Prefill    kafkaPrefill    `json:"prefill"`
	Intake     kafkaIntake     `json:"intake"`
	Processing kafkaProcessing `json:"processing"`
	Relay      kafkaRelay      `json:"relay"`
	Audit      kafkaAudit      `json:"audit"`
	Targets    []target        `json:"targets"`

	IntakeProfile string `json:"intake_profile,omitempty"`
	DrainProfile  string `json:"drain_profile,omitempty"`
}

// kafkaIntake is one `serve --role=ingest` reading the pre-filled topic.
type kafkaIntake struct {
	// StartToFirst is from the process's start to the first batch's
	// transaction: start-up, joining the group, the first fetch.
	StartToFirst duration `json:"start_to_first_batch"`
	// Seconds is from the first batch's transaction to the poll that
	// found the group's offsets covering every message; PerSec is the
	// messages over it.
	Seconds     float64 `json:"seconds"`
	PerSec      float64 `json:"messages_per_sec"`
	WallSeconds float64 `json:"wall_seconds"` // from the process's start
	Covered     bool    `json:"covered"`
	Rows        int64   `json:"inbox_rows"`
	Distinct    int64   `json:"distinct_delivery_ids"`
	// Batches is the inbox transactions (rows of one share received_at).
	Batches   int64   `json:"batches"`
	MeanBatch float64 `json:"mean_batch"`
	// CPU is from the process's start to the poll that found every offset
	// committed.
	CPU        cpuUse          `json:"cpu"`
	Statements []statementStat `json:"statements,omitempty"`
}

// kafkaProcessing is `serve --role=worker` processing the intake's
// deliveries while the destination is paused: each enqueues a send that
// waits, pending.
type kafkaProcessing struct {
	Processed int64   `json:"processed"`
	Seconds   float64 `json:"seconds"` // from the first processing transaction until none was left
	PerSec    float64 `json:"processed_per_sec"`
	Done      bool    `json:"done"`
	Held      int64   `json:"sends_held"`
	CPU       cpuUse  `json:"cpu"` // from the worker's start
}

// kafkaRelay is the same worker sending the held sends once the
// destination is resumed, with nothing else running.
type kafkaRelay struct {
	ResumeTook duration `json:"resume_took"`
	Attempts   int64    `json:"attempts"`
	// Seconds is from the first attempt's start to the last one's end.
	Seconds     float64   `json:"seconds"`
	PerSec      float64   `json:"sends_per_sec"`
	WallSeconds float64   `json:"wall_seconds"` // from the resume until no send was left
	Drained     bool      `json:"drained"`
	Latency     latencies `json:"attempt_latency"` // each attempt's duration_ms
	// BySecond is the attempts started in each second from the first one:
	// a drain that slows as it goes (the claim's index filling with dead
	// entries until autovacuum) shows here, not in the mean.
	BySecond []int64 `json:"attempts_by_second"`
	CPU      cpuUse  `json:"cpu"`
	// Statements are the database's top statements meanwhile (-pg-stats).
	Statements []statementStat `json:"statements,omitempty"`
}

// kafkaAudit checks "each message once": in the inbox, and on the
// destination's topic.
type kafkaAudit struct {
	Topic      topicAudit `json:"destination_topic"`
	Succeeded  int64      `json:"sends_succeeded"`
	Failed     int64      `json:"sends_failed"`
	Unfinished int64      `json:"sends_unfinished"`
	Retried    int64      `json:"sends_with_more_than_one_attempt"`
}

func runKafka(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := kafkaResult{runInfo: newRunInfo(ctx, opts, root, progress), Broker: kafkaBrokerNote,
		Messages: opts.kafkaMessages, Partitions: opts.kafkaPartitions, MaxInFlight: opts.destInFlight}
	out := resultsPath(opts, root, res.Started, "kafka")
	r, issues, err := setupIssueRig(ctx, opts, root, progress, &res.runInfo)
	if err != nil {
		return err
	}
	defer r.close()
	msgs, err := kafkaMessages(issues)
	if err != nil {
		return err
	}
	res.MeanPayload = meanBody(issues)
	progress("starting kfake in the bench process: topics %s, %s and %s, %d partitions each",
		kafkaSourceTopic, kafkaDestTopic, kafkaBareTopic, opts.kafkaPartitions)
	b, err := startKafkaBroker(opts.kafkaPartitions)
	if err != nil {
		return err
	}
	defer b.close()
	k, err := newKafkaServe(r, b.addr)
	if err != nil {
		return err
	}
	if err := k.migrate(ctx); err != nil {
		return err
	}
	if res.Pgbench, res.PgbenchCPU, err = r.pgbenchBaseline(ctx, progress); err != nil {
		return err
	}
	n := opts.kafkaMessages
	meter := cpuMeter{postmasterPID: r.pg.postmasterPID()}
	progress("bare producer: %d messages, %d goroutines, ProduceSync (idempotent, acks=all, no linger)", n, opts.destInFlight)
	end := meter.span(ctx, r.pg)
	if res.Bare, err = b.bareProducer(ctx, msgs, n, opts.destInFlight); err != nil {
		return err
	}
	res.Bare.CPU = end()
	progress("bare producer: %.0f messages/s, %d errors", res.Bare.PerSec, res.Bare.Errors)

	progress("prefill: %d messages to topic %s", n, kafkaSourceTopic)
	end = meter.span(ctx, r.pg)
	if res.Prefill, err = b.prefill(ctx, msgs, n); err != nil {
		return err
	}
	res.Prefill.CPU = end()
	progress("prefill: %.0f messages/s (%.0f MB)", res.Prefill.PerSec, float64(res.Prefill.Bytes)/1e6)

	if res.Intake, err = kafkaRunIntake(ctx, r, k, b, n, &res.IntakeProfile, out, progress); err != nil {
		return err
	}
	r.settle(ctx, progress) // the intake's WAL, before the worker's phase
	worker, err := k.start("worker")
	if err != nil {
		return err
	}
	defer worker.stop()
	if res.Processing, err = kafkaRunProcessing(ctx, r, k, worker, progress); err != nil {
		return err
	}
	if res.Relay, err = kafkaRunDrain(ctx, r, worker, &res.DrainProfile, out, progress); err != nil {
		return err
	}
	if err := worker.stop(); err != nil {
		progress("warning: %v", err)
	}
	if res.Audit, err = kafkaRunAudit(ctx, r, b); err != nil {
		return err
	}
	res.finish()
	res.evaluate()
	printKafka(os.Stdout, res)
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// intakeLimit bounds the wait for the group's offsets to cover the topic.
const intakeLimit = 5 * time.Minute

// kafkaRunIntake starts `serve --role=ingest` on the pre-filled topic and
// times it until the group's committed offsets cover all n messages. An
// ingest-only process works no job, so nothing but recording competes,
// as the throughput scenario measures webhook ingest. Before it stops,
// the destination is paused through its admin API, so that the worker's
// processing leaves every send waiting for the relay.
func kafkaRunIntake(ctx context.Context, r *rig, k *kafkaServe, b *kafkaBroker, n int, profile *string, out string,
	progress func(string, ...any)) (kafkaIntake, error) {
	var in kafkaIntake
	db := r.db
	r.settle(ctx, progress)
	stats := statementStats{enabled: r.opts.pgStats, db: db}
	stats.reset(ctx)
	progress("intake: hookinbox serve --role=ingest reads %d messages", n)
	started := time.Now()
	svc, err := k.start("ingest")
	if err != nil {
		return in, err
	}
	defer svc.stop()
	end := cpuMeter{servicePID: svc.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}.span(ctx, r.pg, r.svcURL)
	if err := k.ready(ctx, svc); err != nil {
		return in, err
	}
	profiled := profileAsync(ctx, svc, r.opts.profile, 5*time.Second, strings.TrimSuffix(out, ".json")+".intake.pprof")
	in.Covered, err = waitUntil(ctx, intakeLimit, func() (bool, error) {
		c, err := b.committed(ctx)
		return c >= int64(n), err
	})
	if err != nil {
		return in, err
	}
	done := time.Now()
	in.CPU = end()
	in.Statements = stats.read(ctx)
	if !in.Covered {
		progress("warning: the group's offsets did not cover the topic within %s", intakeLimit)
	}
	var first time.Time
	if err := db.QueryRow(ctx, `SELECT count(*), count(DISTINCT delivery_id), count(DISTINCT received_at), coalesce(min(received_at), now())
			FROM inbox WHERE source = $1`, kafkaSource).Scan(&in.Rows, &in.Distinct, &in.Batches, &first); err != nil {
		return in, fmt.Errorf("count the intake's rows: %w", err)
	}
	in.StartToFirst, in.Seconds, in.WallSeconds = duration(first.Sub(started)), done.Sub(first).Seconds(), done.Sub(started).Seconds()
	in.PerSec = perSec(int64(n), in.Seconds)
	if in.Batches > 0 {
		in.MeanBatch = float64(in.Rows) / float64(in.Batches)
	}
	progress("intake: %d messages in %.1fs from the first batch: %.0f/s; %d inbox rows, %.0f per batch", n, in.Seconds, in.PerSec, in.Rows, in.MeanBatch)
	if *profile, err = profiled(); err != nil {
		progress("warning: %v", err)
	}
	if err := svc.adminPost(ctx, "/admin/destinations/"+kafkaDestName+"/pause"); err != nil {
		return in, err
	}
	if err := svc.stop(); err != nil {
		progress("warning: %v", err)
	}
	return in, nil
}

// kafkaRunProcessing waits until the worker, started with the destination
// paused, has processed every delivery, and counts the sends it left
// waiting.
func kafkaRunProcessing(ctx context.Context, r *rig, k *kafkaServe, worker *service, progress func(string, ...any)) (kafkaProcessing, error) {
	var p kafkaProcessing
	db := r.db
	progress("processing: hookinbox serve --role=worker, the destination paused")
	end := cpuMeter{servicePID: worker.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}.span(ctx, r.pg, r.svcURL)
	if err := k.ready(ctx, worker); err != nil {
		return p, err
	}
	var err error
	if p.Done, err = waitDrained(ctx, db, sendsLimit); err != nil {
		return p, err
	}
	done := time.Now()
	p.CPU = end()
	if !p.Done {
		progress("warning: deliveries still unprocessed %s after the worker started; the relay starts anyway", sendsLimit)
	}
	var first time.Time
	if err := db.QueryRow(ctx, `SELECT count(*), coalesce(min(processed_at), now()) FROM inbox_outcome WHERE source = $1`, kafkaSource).
		Scan(&p.Processed, &first); err != nil {
		return p, fmt.Errorf("count processed: %w", err)
	}
	p.Seconds = done.Sub(first).Seconds()
	p.PerSec = perSec(p.Processed, p.Seconds)
	if err := db.QueryRow(ctx, `SELECT count(*) FROM destination_send WHERE destination = $1 AND state = 'pending'`, kafkaDestName).
		Scan(&p.Held); err != nil {
		return p, err
	}
	progress("processing: %d in %.1fs, %.0f/s; %d sends held", p.Processed, p.Seconds, p.PerSec, p.Held)
	return p, nil
}

// kafkaRunDrain resumes the destination and times the worker sending its
// held sends, with nothing else running.
func kafkaRunDrain(ctx context.Context, r *rig, worker *service, profile *string, out string, progress func(string, ...any)) (kafkaRelay, error) {
	var d kafkaRelay
	db := r.db
	r.settle(ctx, progress)
	stats := statementStats{enabled: r.opts.pgStats, db: db}
	stats.reset(ctx)
	end := cpuMeter{servicePID: worker.cmd.Process.Pid, postmasterPID: r.pg.postmasterPID()}.span(ctx, r.pg, r.svcURL)
	progress("relay: resuming the destination (max_in_flight %d)", r.opts.destInFlight)
	t0 := time.Now()
	if err := worker.adminPost(ctx, "/admin/destinations/"+kafkaDestName+"/resume"); err != nil {
		return d, err
	}
	d.ResumeTook = duration(time.Since(t0))
	profiled := profileAsync(ctx, worker, r.opts.profile, 5*time.Second, strings.TrimSuffix(out, ".json")+".drain.pprof")
	var err error
	d.Drained, err = waitUntil(ctx, sendsLimit, func() (bool, error) {
		var left bool
		err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM destination_send WHERE destination = $1 AND state IN ('waiting', 'pending'))`,
			kafkaDestName).Scan(&left)
		return !left, err
	})
	if err != nil {
		return d, err
	}
	d.WallSeconds = time.Since(t0).Seconds()
	d.CPU = end()
	d.Statements = stats.read(ctx)
	if !d.Drained {
		progress("warning: sends still unfinished %s after the resume", sendsLimit)
	}
	if *profile, err = profiled(); err != nil {
		progress("warning: %v", err)
	}
	var p50, p90, p99, top float64
	if err := db.QueryRow(ctx, `SELECT count(*),
			coalesce(extract(epoch FROM max(a.attempted_at + a.duration_ms * interval '1 ms') - min(a.attempted_at))::float8, 0),
			coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY a.duration_ms), 0)::float8,
			coalesce(percentile_disc(0.9) WITHIN GROUP (ORDER BY a.duration_ms), 0)::float8,
			coalesce(percentile_disc(0.99) WITHIN GROUP (ORDER BY a.duration_ms), 0)::float8, coalesce(max(a.duration_ms), 0)::float8
			FROM destination_attempt a JOIN destination_send s ON s.id = a.send_id WHERE s.destination = $1`, kafkaDestName).
		Scan(&d.Attempts, &d.Seconds, &p50, &p90, &p99, &top); err != nil {
		return d, fmt.Errorf("read the attempts: %w", err)
	}
	ms := func(v float64) duration { return duration(time.Duration(v * float64(time.Millisecond))) }
	d.Latency = latencies{P50: ms(p50), P90: ms(p90), P99: ms(p99), Max: ms(top)}
	d.PerSec = perSec(d.Attempts, d.Seconds)
	if d.BySecond, err = attemptsBySecond(ctx, r.db); err != nil {
		return d, err
	}
	progress("relay: %d attempts in %.1fs, %.0f sends/s (resume took %s)", d.Attempts, d.Seconds, d.PerSec, d.ResumeTook)
	return d, nil
}

// attemptsBySecond counts the destination's attempts by the second they
// started in, from the first one's.
func attemptsBySecond(ctx context.Context, db *pgxpool.Pool) ([]int64, error) {
	rows, err := db.Query(ctx, `WITH a AS (
			SELECT a.attempted_at AS at FROM destination_attempt a JOIN destination_send s ON s.id = a.send_id WHERE s.destination = $1)
		SELECT floor(extract(epoch FROM at - (SELECT min(at) FROM a)))::int, count(*) FROM a GROUP BY 1 ORDER BY 1`, kafkaDestName)
	if err != nil {
		return nil, fmt.Errorf("attempts by second: %w", err)
	}
	var out []int64
	var sec int
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&sec, &n}, func() error {
		for len(out) <= sec {
			out = append(out, 0)
		}
		out[sec] = n
		return nil
	})
	return out, err
}

// kafkaRunAudit reads the destination's topic and the sends' states.
func kafkaRunAudit(ctx context.Context, r *rig, b *kafkaBroker) (kafkaAudit, error) {
	var a kafkaAudit
	var err error
	if a.Topic, err = b.auditTopic(ctx, kafkaDestTopic, time.Minute); err != nil {
		return a, err
	}
	err = r.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE state = 'failed'),
			count(*) FILTER (WHERE state IN ('waiting', 'pending', 'held')), count(*) FILTER (WHERE attempts > 1)
			FROM destination_send WHERE destination = $1`, kafkaDestName).Scan(&a.Succeeded, &a.Failed, &a.Unfinished, &a.Retried)
	if err != nil {
		return a, fmt.Errorf("audit sends: %w", err)
	}
	return a, nil
}

// profileAsync takes svc's CPU profile over d into path, if on; the
// returned func waits for it and returns the path, "" without one.
func profileAsync(ctx context.Context, svc *service, on bool, d time.Duration, path string) func() (string, error) {
	if !on {
		return func() (string, error) { return "", nil }
	}
	done := make(chan error, 1)
	go func() { done <- svc.cpuProfile(ctx, d, path) }()
	return func() (string, error) {
		if err := <-done; err != nil {
			return "", err
		}
		return path, nil
	}
}

// meanBody is the mean size of the payloads' bodies.
func meanBody(ps []payload) int {
	if len(ps) == 0 {
		return 0
	}
	var sum int
	for _, p := range ps {
		sum += len(p.body)
	}
	return sum / len(ps)
}

// evaluate checks the scenario's targets: intake above pgbench's
// one-delivery rate (each poll is one transaction for up to 500
// messages), every message once in the inbox and on the destination's
// topic. The drain's ratios are for scale.
func (res *kafkaResult) evaluate() {
	n, in, a := int64(res.Messages), res.Intake, res.Audit
	tps := res.Pgbench.TPS
	if tps > 0 {
		ratio := in.PerSec / tps
		res.Targets = append(res.Targets, target{Name: "intake messages/s ÷ pgbench tps",
			Measured: fmt.Sprintf("%.2f (%.0f / %.0f)", ratio, in.PerSec, tps), Goal: "> 1.00", Met: ratio > 1})
	}
	res.Targets = append(res.Targets,
		target{Name: "inbox rows, each message once", Measured: fmt.Sprintf("%d rows, %d ids, of %d", in.Rows, in.Distinct, n),
			Goal: "all, once", Met: in.Rows == n && in.Distinct == n},
		target{Name: "destination topic, each delivery once", Measured: fmt.Sprintf("%d messages, %d webhook-ids, %d repeated, of %d",
			a.Topic.Records, a.Topic.Distinct, a.Topic.Repeated, n), Goal: "all; repeats legal after a retry, reported",
			Met: a.Topic.Distinct == n && a.Topic.Missing == 0 && a.Succeeded == n})
}
