package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// processingResult is how a worker-only `hookinbox serve` worked off the
// backlog both ingest phases left, with nothing else running, as River's
// reference runs.
type processingResult struct {
	Backlog   int64    `json:"backlog"`   // `received` when the worker started
	Processed int64    `json:"processed"` // of those, no longer `received` when the wait ended
	Remaining int64    `json:"remaining"` // still `received` when the wait ended
	Drained   bool     `json:"drained"`
	DrainTime duration `json:"drain_time"` // worker ready until none is `received`, or until the wait ended
	// PerSec is Processed over its first to last processed_at (the
	// processing transactions' start times): the rate once the worker ran,
	// without its startup.
	PerSec   float64        `json:"per_sec"`
	Statuses map[string]int `json:"statuses"` // of the run's accepted deliveries, at the end
	RSSMB    float64        `json:"rss_mb"`   // the worker's peak VmRSS
}

// countReceived is the backlog: rows no worker has processed yet.
func countReceived(ctx context.Context, db *pgxpool.Pool) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, "SELECT count(*) FROM inbox_pending").Scan(&n)
	return n, err
}

// waitDrained waits, at most limit, until no delivery is `received`, and
// reports whether that happened. A backlog left at the limit is reported,
// not waited for: the rate is known by then and the run has a time budget.
func waitDrained(ctx context.Context, db *pgxpool.Pool, limit time.Duration) (bool, error) {
	return waitUntil(ctx, limit, func() (bool, error) { return noneReceived(ctx, db) })
}

// noneReceived reports whether no delivery is `received`. Polling must not
// become the load it measures: counting the pending rows scans them, so
// this only asks whether one is left.
func noneReceived(ctx context.Context, db *pgxpool.Pool) (bool, error) {
	err := db.QueryRow(ctx, "SELECT inbox_id FROM inbox_pending LIMIT 1").Scan(new(int64))
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for received deliveries: %w", err)
	}
	return false, nil
}

// waitUntil polls done every 100 ms until it holds, at most limit, and
// reports whether it held.
func waitUntil(ctx context.Context, limit time.Duration, done func() (bool, error)) (bool, error) {
	deadline := time.Now().Add(limit)
	for {
		ok, err := done()
		if ok || err != nil {
			return ok, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// maxInboxID is the newest inbox row's id, 0 in an empty inbox: the rows
// of a phase are those between its value before and after.
func maxInboxID(ctx context.Context, db *pgxpool.Pool) (int64, error) {
	var id int64
	err := db.QueryRow(ctx, "SELECT coalesce(max(id), 0) FROM inbox").Scan(&id)
	return id, err
}

// rowLatencies are percentiles of one interval per inbox row of a phase.
type rowLatencies struct {
	Rows int64    `json:"rows"`
	P50  duration `json:"p50"`
	P99  duration `json:"p99"`
	Max  duration `json:"max"`
}

// readRowLatencies runs query, which yields one interval in seconds per
// row, $1 and $2 bounding the inbox ids of a phase, and returns its
// nearest-rank percentiles (as percentiles does for answers).
func readRowLatencies(ctx context.Context, db *pgxpool.Pool, query string, from, to int64) (rowLatencies, error) {
	var (
		l             rowLatencies
		p50, p99, top *float64
	)
	err := db.QueryRow(ctx, `SELECT count(*), percentile_disc(0.5) WITHIN GROUP (ORDER BY s), percentile_disc(0.99) WITHIN GROUP (ORDER BY s), max(s)
		FROM (`+query+`) AS x (s)`, from, to).Scan(&l.Rows, &p50, &p99, &top)
	if err != nil {
		return l, err
	}
	secs := func(f *float64) duration {
		if f == nil {
			return 0
		}
		return duration(time.Duration(*f * float64(time.Second)))
	}
	l.P50, l.P99, l.Max = secs(p50), secs(p99), secs(top)
	return l, nil
}

// ackToProcessed is processed_at − received_at of the rows with ids in
// ($1, $2]: from the ingest transaction's start to the processing batch's
// status update. A row not yet processed counts as processed now.
const ackToProcessed = `SELECT extract(epoch FROM coalesce(processed_at, clock_timestamp()) - received_at)::float8
	FROM delivery WHERE id > $1 AND id <= $2`

// drainStats reads back how the worker processed a backlog of backlog rows,
// started at start, in a wait that ended at waited.
func drainStats(ctx context.Context, db *pgxpool.Pool, backlog int64, start, waited time.Time, drained bool, accepted []acceptedDelivery) (processingResult, error) {
	res := processingResult{Backlog: backlog, Drained: drained, DrainTime: duration(waited.Sub(start))}
	var first, last *time.Time
	if err := db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'received'),
			min(processed_at) FILTER (WHERE processed_at >= $1), max(processed_at) FILTER (WHERE processed_at >= $1)
			FROM delivery`, start.Add(-time.Second)).
		Scan(&res.Remaining, &first, &last); err != nil {
		return res, fmt.Errorf("count the backlog: %w", err)
	}
	res.Processed = backlog - res.Remaining
	if first != nil && last != nil && last.After(*first) {
		res.PerSec = float64(res.Processed) / last.Sub(*first).Seconds()
	}

	ids := make([]string, len(accepted))
	for i, a := range accepted {
		ids[i] = a.ID
	}
	rows, err := db.Query(ctx, `SELECT status, count(*) FROM delivery WHERE source = 'github' AND delivery_id = ANY($1) GROUP BY status`, ids)
	if err != nil {
		return res, err
	}
	res.Statuses = map[string]int{}
	var status string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error { res.Statuses[status] = n; return nil }); err != nil {
		return res, err
	}
	return res, nil
}

// auditResult checks the promise behind every 202: the delivery's row and
// its processing job were committed before the answer.
type auditResult struct {
	Accepted       int64 `json:"accepted"`        // 202s received
	Rows           int64 `json:"rows"`            // of those, inbox rows found
	IDMismatch     int64 `json:"id_mismatch"`     // rows whose id is not the one the 202 named
	WithoutJob     int64 `json:"without_job"`     // rows with no processing job (delivery_job_ids)
	ExtraJobs      int64 `json:"extra_jobs"`      // rows with more than one job (a duplicate that enqueued)
	InboxRows      int64 `json:"inbox_rows"`      // all rows: more than Accepted means commits nobody was told about
	NotProcessed   int64 `json:"not_processed"`   // accepted rows still `received` or `failed`
	JobsIncomplete int64 `json:"jobs_incomplete"` // their jobs not `completed`
}

// Lost is every acknowledged delivery without its row or its job.
func (a auditResult) Lost() int64 { return a.Accepted - a.Rows + a.WithoutJob }

func audit(ctx context.Context, db *pgxpool.Pool, accepted []acceptedDelivery) (auditResult, error) {
	res := auditResult{Accepted: int64(len(accepted))}
	ids := make([]string, len(accepted))
	inboxIDs := make([]int64, len(accepted))
	for i, a := range accepted {
		ids[i], inboxIDs[i] = a.ID, a.InboxID
	}
	err := db.QueryRow(ctx, `
		WITH acked AS (
			SELECT i.id, i.status, a.inbox_id
			FROM unnest($1::text[], $2::bigint[]) AS a(delivery_id, inbox_id)
			JOIN delivery i ON i.source = 'github' AND i.delivery_id = a.delivery_id
		), jobs AS (
			SELECT acked.id, count(j.id) AS n, count(j.id) FILTER (WHERE j.state <> 'completed') AS incomplete
			FROM acked
			LEFT JOIN LATERAL delivery_job_ids(acked.id) AS d (job_id) ON true
			LEFT JOIN river_job j ON j.id = d.job_id
			GROUP BY acked.id
		)
		SELECT
			(SELECT count(*) FROM acked),
			(SELECT count(*) FROM acked WHERE id <> inbox_id),
			(SELECT count(*) FROM jobs WHERE n = 0),
			(SELECT count(*) FROM jobs WHERE n > 1),
			(SELECT count(*) FROM inbox),
			(SELECT count(*) FROM acked WHERE status NOT IN ('processed', 'skipped')),
			(SELECT coalesce(sum(incomplete), 0) FROM jobs)`,
		ids, inboxIDs).Scan(&res.Rows, &res.IDMismatch, &res.WithoutJob, &res.ExtraJobs, &res.InboxRows, &res.NotProcessed, &res.JobsIncomplete)
	if err != nil {
		return res, fmt.Errorf("audit: %w", err)
	}
	return res, nil
}
