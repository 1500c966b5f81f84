package main

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/hookinbox/hookinbox/jobs"
)

// retentionResult is the -scenario retention report: what deleting a large
// expired backlog costs, and what it does to ingest running alongside.
type retentionResult struct {
	Started        time.Time   `json:"started"`
	Machine        machineInfo `json:"machine"`
	Rows           int         `json:"expired_rows"`
	PayloadBytes   int         `json:"expired_payload_bytes"`
	Rate           float64     `json:"ingest_rate_per_sec"`
	SeedSeconds    float64     `json:"seed_seconds"`
	DeleteSeconds  float64     `json:"delete_seconds"`
	DeletedPerSec  float64     `json:"deleted_per_sec"`
	Before         loadResult  `json:"ingest_before"`
	During         loadResult  `json:"ingest_during"`
	RowsLeftAtStop int         `json:"expired_rows_left"`
}

// runRetention measures the retention pass: a steady open-loop ingest
// first alone, then while the service deletes rows expired rows that were
// seeded straight into its inbox (processed, received 40 days ago, past the
// default 30 days).
func runRetention(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := retentionResult{Started: time.Now().UTC(), Machine: describeMachine(ctx, root),
		Rows: opts.retentionRows, PayloadBytes: 512, Rate: opts.retentionRate}
	r, err := setupRig(ctx, opts, root, progress)
	if err != nil {
		return err
	}
	defer r.close()
	progress("starting hookinbox serve")
	svc, err := r.start(ctx, "all")
	if err != nil {
		return err
	}
	defer svc.stop()
	db := r.db
	gen := newGenerator(svc.webhookURL, "push", r.payloads, opts.concurrency, opts.dupShare)

	progress("ingest alone: open loop at %.0f/s for %s", opts.retentionRate, opts.duration)
	res.Before = gen.openLoop(ctx, opts.retentionRate, opts.duration)
	progress("ingest alone: p99 %s, %d errors", res.Before.Latency.P99, res.Before.Errors)

	progress("seeding %d expired rows", opts.retentionRows)
	t0 := time.Now()
	const chunk = 100_000
	for from := 1; from <= opts.retentionRows; from += chunk {
		to := min(from+chunk-1, opts.retentionRows)
		if _, err := db.Exec(ctx, `WITH seeded AS (
				INSERT INTO inbox (source, delivery_id, event_type, headers, payload, payload_sha256, received_at)
				SELECT 'github', 'expired-' || g, 'push', '{}', convert_to(repeat('x', 512), 'UTF8'),
				       sha256(convert_to('expired-' || g, 'UTF8')), now() - interval '40 days' + g * interval '1 ms'
				FROM generate_series($1::int, $2::int) g
				RETURNING id, source, event_type, received_at
			)
			INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
			SELECT id, source, event_type, received_at, 'processed', now() - interval '40 days' FROM seeded`, from, to); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	if _, err := db.Exec(ctx, "VACUUM ANALYZE inbox, inbox_outcome"); err != nil {
		return err
	}
	res.SeedSeconds = time.Since(t0).Seconds()

	// The periodic pass already ran at startup (nothing was expired then);
	// enqueue one now, as the next tick would.
	rc, err := river.NewClient(riverpgxv5.New(db), &river.Config{})
	if err != nil {
		return err
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	during := make(chan loadResult, 1)
	go func() { during <- gen.openLoop(loadCtx, opts.retentionRate, 15*time.Minute) }()
	time.Sleep(2 * time.Second) // the load settles before deletion starts
	progress("retention pass: deleting while ingest runs at %.0f/s", opts.retentionRate)
	t1 := time.Now()
	if _, err := rc.Insert(ctx, jobs.RetentionArgs{}, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(14 * time.Minute)
	for time.Now().Before(deadline) {
		var left bool
		// Through the received_at index: cheap, so polling does not weigh
		// on what it measures.
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inbox WHERE received_at < now() - interval '30 days')`).Scan(&left); err != nil {
			return err
		}
		if !left {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	res.DeleteSeconds = time.Since(t1).Seconds()
	time.Sleep(2 * time.Second)
	stopLoad()
	res.During = <-during
	if err := db.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE received_at < now() - interval '30 days'`).Scan(&res.RowsLeftAtStop); err != nil {
		return err
	}
	res.DeletedPerSec = float64(opts.retentionRows-res.RowsLeftAtStop) / res.DeleteSeconds

	fmt.Printf("retention: %d expired rows (512 B payloads) deleted in %.1fs (%.0f rows/s, batches of 5000, 100ms pause), %d left\n",
		opts.retentionRows-res.RowsLeftAtStop, res.DeleteSeconds, res.DeletedPerSec, res.RowsLeftAtStop)
	fmt.Printf("ingest at %.0f/s alone:            p50 %s  p99 %s  max %s  errors %d\n", opts.retentionRate,
		res.Before.Latency.P50, res.Before.Latency.P99, res.Before.Latency.Max, res.Before.Errors)
	fmt.Printf("ingest at %.0f/s during deletion:  p50 %s  p99 %s  max %s  errors %d\n", opts.retentionRate,
		res.During.Latency.P50, res.During.Latency.P99, res.During.Latency.Max, res.During.Errors)
	out := resultsPath(opts, root, res.Started, "retention")
	progress("wrote %s", out)
	return writeJSON(out, res)
}
