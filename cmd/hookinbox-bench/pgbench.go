package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// pgbenchScript is one accepted delivery's transaction as hookinbox runs
// it: the key generations' fence from internal/inbox/sql/key_fence.sql,
// the key (looked up first) and inbox inserts from
// internal/inbox/sql/inbox_insert.sql (with the delivery's inbox_pending
// row), then the job insert River's InsertTx sends
// (JobInsertFastMany in riverpgxv5's river_job.sql, with River's values for
// a process_delivery job: one-row arrays, max_attempts 25, priority 1,
// metadata {}, no tags, no unique key).
// The payload, its hash and the headers are bind parameters, as pgx sends
// them. River's insert notification (pg_notify) is left out: River
// rate-limits it to a few per second per queue, so it is not a per-delivery
// cost.
//
// River's zero-time literal is a variable here because pgbench would take
// its ":00" for one.
//
// The delivery id is a random UUID made by the server: GitHub's GUIDs are
// random too, so both land at random places in inbox_key's unique index.
const pgbenchScript = `BEGIN;
SELECT pg_advisory_xact_lock_shared(26731, 1);
WITH d AS (
    SELECT gen_random_uuid()::text AS delivery_id
), key AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
    SELECT :source, d.delivery_id, nextval('inbox_id_seq'), decode(:sha%[1]d, 'hex'), :origin FROM d
    WHERE NOT EXISTS (SELECT 1 FROM inbox_key k WHERE k.source = :source AND k.delivery_id = d.delivery_id)
    ON CONFLICT DO NOTHING
    RETURNING source, delivery_id, inbox_id, payload_sha256
), stored AS (
    INSERT INTO inbox (id, source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin)
    SELECT inbox_id, source, delivery_id, :event_type, NULL, :headers, :payload%[1]d, payload_sha256, :origin FROM key
    RETURNING id, source, event_type, received_at
), pending AS (
    INSERT INTO inbox_pending (inbox_id, source, event_type, received_at) SELECT id, source, event_type, received_at FROM stored
)
SELECT id FROM stored \gset
WITH raw_job_data AS (
    SELECT
        unnest(ARRAY[0]::bigint[]) AS id,
        unnest(ARRAY[('{"inbox_id":' || :id::text || '}')::jsonb]) AS args,
        unnest(ARRAY[now()]::timestamptz[]) AS created_at,
        unnest(ARRAY['process_delivery']::text[]) AS kind,
        unnest(ARRAY[25]::smallint[]) AS max_attempts,
        unnest(ARRAY['{}']::jsonb[]) AS metadata,
        unnest(ARRAY[1]::smallint[]) AS priority,
        unnest(ARRAY['deliveries']::text[]) AS queue,
        unnest(ARRAY[now()]::timestamptz[]) AS scheduled_at,
        unnest(ARRAY['available']::text[]) AS state,
        unnest(ARRAY['']::text[]) AS tags,
        unnest(ARRAY[NULL]::bytea[]) AS unique_key,
        unnest(ARRAY[0]::integer[]) AS unique_states
)
` + riverJobInsert + `COMMIT;
`

// pgbenchBatchScript is pgbenchScript for %[2]d deliveries in one
// transaction, as a batching ingest records them: one multi-row inbox
// insert, then one job insert for the rows it returned (River's
// InsertManyTx sends the same statement with n-row arrays).
const pgbenchBatchScript = `BEGIN;
SELECT pg_advisory_xact_lock_shared(26731, 1);
WITH d AS (
    SELECT gen_random_uuid()::text AS delivery_id FROM generate_series(1, %[2]d)
), key AS (
    INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
    SELECT :source, d.delivery_id, nextval('inbox_id_seq'), decode(:sha%[1]d, 'hex'), :origin FROM d
    LEFT JOIN LATERAL (SELECT 1 FROM inbox_key k WHERE k.source = :source AND k.delivery_id = d.delivery_id LIMIT 1) AS seen (one) ON true
    WHERE seen.one IS NULL
    ON CONFLICT DO NOTHING
    RETURNING source, delivery_id, inbox_id, payload_sha256
), ins AS (
    INSERT INTO inbox (id, source, delivery_id, event_type, occurred_at, headers, payload, payload_sha256, origin)
    SELECT inbox_id, source, delivery_id, :event_type, NULL, :headers, :payload%[1]d, payload_sha256, :origin FROM key
    RETURNING id, source, event_type, received_at
), pending AS (
    INSERT INTO inbox_pending (inbox_id, source, event_type, received_at) SELECT id, source, event_type, received_at FROM ins
)
SELECT array_agg(id) AS ids FROM ins \gset
WITH raw_job_data AS (
    SELECT
        0::bigint AS id,
        ('{"inbox_id":' || i::text || '}')::jsonb AS args,
        now() AS created_at,
        'process_delivery'::text AS kind,
        25::smallint AS max_attempts,
        '{}'::jsonb AS metadata,
        1::smallint AS priority,
        'deliveries'::text AS queue,
        now() AS scheduled_at,
        'available'::text AS state,
        ''::text AS tags,
        NULL::bytea AS unique_key,
        0::integer AS unique_states
    FROM unnest(:ids::bigint[]) AS i
)
` + riverJobInsert + `COMMIT;
`

// riverJobInsert is the rest of River's JobInsertFastMany, from its
// raw_job_data.
const riverJobInsert = `INSERT INTO river_job (id, args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags, unique_key, unique_states)
SELECT
    coalesce(nullif(id, 0), nextval('river_job_id_seq'::regclass)),
    args,
    coalesce(nullif(created_at, :zero_time), now()) AS created_at,
    kind,
    max_attempts,
    coalesce(metadata, '{}'::jsonb) AS metadata,
    priority,
    queue,
    coalesce(nullif(scheduled_at, :zero_time), now()) AS scheduled_at,
    state::river_job_state,
    string_to_array(tags, ',')::varchar(255)[],
    nullif(unique_key, '')::bytea,
    nullif(unique_states::integer, 0)::bit(8)
FROM raw_job_data
ON CONFLICT (unique_key)
    WHERE unique_key IS NOT NULL
        AND unique_states IS NOT NULL
        AND river_job_state_in_bitmask(unique_states, state)
    DO UPDATE SET kind = river_job.kind
RETURNING river_job.*, (xmax != 0) AS unique_skipped_as_duplicate;
`

// pgbenchPayloads is how many of the run's bodies pgbench sends, each from
// a script of its own (pgbench cannot pick a variable at random); spread
// evenly over the run's sizes, they keep the mean payload size.
const pgbenchPayloads = 8

type pgbenchConfig struct {
	BinDir   string
	URL      string
	Work     string
	Clients  int
	Duration time.Duration
	Payloads []payload
	Batch    int // deliveries per transaction: 1 is pgbenchScript, more pgbenchBatchScript
	// Rate, when positive, holds pgbench to this many transactions a second
	// (its -R): an open loop, as the steady steps are.
	Rate float64
}

type pgbenchResult struct {
	TPS              float64 `json:"tps"`
	Batch            int     `json:"deliveries_per_tx"`
	DeliveriesPerSec float64 `json:"deliveries_per_sec"` // TPS × Batch
	Transactions     int64   `json:"transactions"`
	Failed           int64   `json:"failed"`
	LatencyAvgMillis float64 `json:"latency_avg_ms"`
	Clients          int     `json:"clients"`
	Threads          int     `json:"threads"`
	Seconds          int     `json:"seconds"`
	MeanPayloadBytes int     `json:"mean_payload_bytes"`
	ClientCPUSeconds float64 `json:"client_cpu_s"` // pgbench's own CPU, part of the phase's "other"
}

var (
	tpsRe     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	txRe      = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failedRe  = regexp.MustCompile(`number of failed transactions: (\d+)`)
	latencyRe = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// runPgbench runs the delivery transaction with cfg.Clients connections for
// cfg.Duration, prepared statements like pgx's statement cache.
func runPgbench(ctx context.Context, cfg pgbenchConfig) (pgbenchResult, error) {
	seconds := int(math.Ceil(cfg.Duration.Seconds()))
	res := pgbenchResult{Clients: cfg.Clients, Threads: min(cfg.Clients, runtime.NumCPU()), Seconds: seconds, Batch: max(cfg.Batch, 1)}
	script := pgbenchScript
	if res.Batch > 1 {
		script = pgbenchBatchScript
	}
	headers, err := storedHeaders(cfg.Payloads[0])
	if err != nil {
		return res, err
	}
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(cfg.Clients), "-j", strconv.Itoa(res.Threads),
		"-T", strconv.Itoa(seconds),
		"-D", "source=github", "-D", "event_type=push", "-D", "origin=webhook", "-D", "zero_time=0001-01-01 00:00:00 +0000", "-D", "headers=" + headers}
	if cfg.Rate > 0 {
		args = append(args, "-R", strconv.FormatFloat(cfg.Rate, 'f', 0, 64))
	}
	total := 0
	for i := range pgbenchPayloads {
		p := cfg.Payloads[i*(len(cfg.Payloads)-1)/(pgbenchPayloads-1)]
		total += len(p.body)
		path := filepath.Join(cfg.Work, fmt.Sprintf("delivery%d-x%d.sql", i, res.Batch))
		if err := os.WriteFile(path, fmt.Appendf(nil, script, i, res.Batch), 0o644); err != nil {
			return res, err
		}
		args = append(args, "-f", path,
			"-D", fmt.Sprintf("payload%d=%s", i, p.body), "-D", fmt.Sprintf("sha%d=%s", i, p.sha256Hex))
	}
	res.MeanPayloadBytes = total / pgbenchPayloads
	// pgbench takes a connection URI as its dbname. The password goes in
	// the environment, out of every user's sight in ps.
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return res, err
	}
	password, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	args = append(args, u.String())

	cmd := exec.CommandContext(ctx, filepath.Join(cfg.BinDir, "pgbench"), args...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil {
		res.ClientCPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	text := string(out)
	if err != nil {
		return res, fmt.Errorf("pgbench: %w\n%s", err, lastLines(text, 20))
	}
	m := tpsRe.FindStringSubmatch(text)
	if m == nil {
		return res, fmt.Errorf("pgbench: no tps in its output:\n%s", lastLines(text, 20))
	}
	res.TPS, _ = strconv.ParseFloat(m[1], 64)
	res.DeliveriesPerSec = res.TPS * float64(res.Batch)
	if m := txRe.FindStringSubmatch(text); m != nil {
		res.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := failedRe.FindStringSubmatch(text); m != nil {
		res.Failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := latencyRe.FindStringSubmatch(text); m != nil {
		res.LatencyAvgMillis, _ = strconv.ParseFloat(m[1], 64)
	}
	return res, nil
}

// storedHeaders is the headers column of an inbox row for p, as ingest
// stores what the load generator's client sends (Go's net/http adds Host,
// User-Agent, Content-Length and Accept-Encoding).
func storedHeaders(p payload) (string, error) {
	h := p.header.Clone()
	h.Set("Host", "127.0.0.1:8080")
	h.Set("Content-Length", strconv.Itoa(len(p.body)))
	h.Set("Accept-Encoding", "gzip")
	b, err := json.Marshal(h)
	return string(b), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// pgbenchOther says how much else ran on the machine during a pgbench
// phase: its `other` CPU less pgbench's own client, in cores.
func pgbenchOther(p pgbenchResult, u cpuUse) string {
	if u.Seconds <= 0 {
		return "CPU not measured"
	}
	return fmt.Sprintf("other %.2f cores besides its client", max(u.Other-p.ClientCPUSeconds, 0)/u.Seconds)
}
