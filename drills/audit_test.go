package drills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/jobs"
)

// workKinds are the River jobs that carry a delivery's processing and its
// effects; other jobs (retention) do not count towards "settled".
const workKinds = `'process_delivery', 'process_deliveries', 'stripe_fulfill', 'stripe_refund'`

// backlog is what is left to do: inbox rows not yet processed and work
// jobs not yet finished.
type backlog struct {
	Unprocessed int
	Jobs        map[string]int // "kind/state" → count
}

func (b backlog) empty() bool { return b.Unprocessed == 0 && len(b.Jobs) == 0 }

func (b backlog) String() string {
	return fmt.Sprintf("%d inbox rows not processed; unfinished jobs %v", b.Unprocessed, b.Jobs)
}

// readBacklog reads the inbox and the jobs in one snapshot. Read apart, a
// batch completing between the two reads showed its deliveries unprocessed
// and their jobs finished: a backlog no fault explains, which failed the
// outage drill about once in 45 runs on a loaded machine.
func readBacklog(ctx context.Context, pool *pgxpool.Pool) (backlog, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return backlog{}, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only; nothing to undo
	return readBacklogTx(ctx, tx)
}

func readBacklogTx(ctx context.Context, tx pgx.Tx) (backlog, error) {
	b := backlog{Jobs: map[string]int{}}
	err := tx.QueryRow(ctx, `SELECT count(*) FROM delivery WHERE status NOT IN ('processed', 'skipped')`).Scan(&b.Unprocessed)
	if err != nil {
		return b, err
	}
	// Destination sends are made by the senders, not by jobs: an
	// unfinished one counts by its state.
	srows, err := tx.Query(ctx, `SELECT 'destination_send/' || state, count(*) FROM destination_send
		WHERE state IN ('waiting', 'pending', 'held') GROUP BY 1`)
	if err != nil {
		return b, err
	}
	for srows.Next() {
		var k string
		var n int
		if err := srows.Scan(&k, &n); err != nil {
			srows.Close()
			return b, err
		}
		b.Jobs[k] = n
	}
	if err := srows.Err(); err != nil {
		return b, err
	}
	rows, err := tx.Query(ctx, `SELECT kind || '/' || state, count(*) FROM river_job
		WHERE kind IN (`+workKinds+`) AND state NOT IN ('completed', 'cancelled', 'discarded') GROUP BY 1`)
	if err != nil {
		return b, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return b, err
		}
		b.Jobs[k] = n
	}
	return b, rows.Err()
}

// settle waits, polling, until every inbox row is processed and every work
// job finished, or timeout passes. It returns what is left.
func settle(t testing.TB, pool *pgxpool.Pool, timeout time.Duration) backlog {
	t.Helper()
	ctx := context.Background()
	var last backlog
	var lastErr error
	waitFor(ctx, timeout, 200*time.Millisecond, func() bool {
		last, lastErr = readBacklog(ctx, pool)
		return lastErr == nil && last.empty()
	})
	if lastErr != nil {
		t.Fatalf("reading the backlog: %v", lastErr)
	}
	return last
}

// auditResult is one drill's row in the results table.
type auditResult struct {
	Drill           string
	Rate            float64 // deliveries started per second
	Faults          string
	Sent            int
	Acked           int
	Stored          int // rows holding a delivery the generator sent
	AckedStored     int // deliveries acknowledged that have their row
	Processed       int // of those, processed or skipped
	Duplicates      int // 200 duplicate answers
	EffectsExpected int
	EffectsFound    int
	Lost            int // acked and not stored, or an expected effect missing
	Doubled         int // a second row or effect for one delivery
	Problems        []string

	// ackedAt holds, for each delivery acknowledged that has its row, when
	// its first 2xx came.
	ackedAt []time.Time
}

// minAckedShare is the share of the deliveries sent that the audit requires
// acknowledged and stored. A provider retries for about 40 s, longer than
// any fault lasts, so a working hookinbox acknowledges nearly all of them;
// the rest is room for a provider that gave up. Without this bound, an
// ingest that refuses everything loses nothing and doubles nothing, and
// passes.
const minAckedShare = 0.9

// ackedBetween counts the deliveries acknowledged and stored whose first
// 2xx came after from and before to.
func (r *auditResult) ackedBetween(from, to time.Time) int {
	n := 0
	for _, at := range r.ackedAt {
		if at.After(from) && at.Before(to) {
			n++
		}
	}
	return n
}

func (r *auditResult) problem(format string, args ...any) {
	if len(r.Problems) < 30 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// auditOpts is what a drill's configuration adds to what the audit
// expects.
type auditOpts struct {
	// githubForward: some process gives github a forward_url
	// (serveConfig.GitHubForward), so a github delivery may have one
	// forward effect under githubForwardKey, never two. Which deliveries
	// must have one depends on which process processed them: the drill
	// checks that.
	githubForward bool
}

// audit compares what the generator sent and was told with the inbox, the
// ledger and the stub's effects. It does not wait; call settle first.
func audit(t testing.TB, pool *pgxpool.Pool, stub *downstreamstub.Server, g *generator) *auditResult {
	t.Helper()
	return auditWith(t, pool, stub, g, auditOpts{})
}

// auditWith is audit for a drill whose configuration adds effects.
func auditWith(t testing.TB, pool *pgxpool.Pool, stub *downstreamstub.Server, g *generator, o auditOpts) *auditResult {
	t.Helper()
	ctx := context.Background()
	res := &auditResult{}
	st := g.stats()
	res.Sent, res.Acked, res.Duplicates = st.Sent, st.Acked, st.Duplicates
	for _, u := range st.Unexpected {
		res.problem("unexpected answer to valid traffic: %s", u)
	}

	// Each row with its payload's hash and how many processing jobs its
	// insert enqueued: all of its jobs (its batch's, its own) minus those
	// its replays added and those a batch job gave it (TagFromBatch).
	type row struct {
		id     int64
		status string
		sum    []byte
		jobs   int
	}
	rows := map[string]row{} // source + " " + delivery_id
	q, err := pool.Query(ctx, `SELECT i.source, i.delivery_id, i.id, i.status, i.payload_sha256,
		(SELECT count(*) FROM delivery_job_ids(i.id) AS d (job_id) JOIN river_job j ON j.id = d.job_id
		 WHERE NOT j.tags @> '{`+jobs.TagFromBatch+`}')
		- (SELECT count(*) FROM replay r WHERE r.inbox_id = i.id)
		FROM delivery i`)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	for q.Next() {
		var src, id string
		var r row
		if err := q.Scan(&src, &id, &r.id, &r.status, &r.sum, &r.jobs); err != nil {
			t.Fatalf("audit: %v", err)
		}
		if _, dup := rows[src+" "+id]; dup {
			res.Doubled++
			res.problem("two inbox rows for %s %s", src, id)
		}
		if r.jobs != 1 {
			res.problem("inbox row %d (%s %.40s) has %d processing jobs from ingest; want 1", r.id, src, id, r.jobs)
		}
		rows[src+" "+id] = r
	}
	q.Close()
	var batchJobs, ownJobs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = 'process_deliveries'),
		count(*) FILTER (WHERE kind = 'process_delivery') FROM river_job`).Scan(&batchJobs, &ownJobs); err != nil {
		t.Fatalf("audit: %v", err)
	}
	t.Logf("audit: %d rows; processing jobs: %d batches' (process_deliveries), %d deliveries' own (process_delivery)",
		len(rows), batchJobs, ownJobs)

	credits := map[string]int{} // payment intent → ledger credits
	q, err = pool.Query(ctx, `SELECT payment_intent, count(*) FROM ledger WHERE kind = 'credit' GROUP BY 1`)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	for q.Next() {
		var pi string
		var n int
		if err := q.Scan(&pi, &n); err != nil {
			t.Fatalf("audit: %v", err)
		}
		credits[pi] = n
	}
	q.Close()

	fulfilled, forwarded, refunded := stub.Effects(fulfillPath), stub.Effects(forwardPath), stub.Effects(refundPath)
	expectedKeys := map[string]bool{}
	sent := map[string]bool{}
	for _, r := range g.Records() {
		d := r.D
		sent[d.Source+" "+d.ID] = true
		first, acked := r.firstAck()
		ackedID := first.InboxID
		stored, ok := rows[d.Source+" "+d.ID]
		switch {
		case !ok && acked:
			res.Lost++
			res.problem("%s %s was acknowledged but is not in the inbox", d.Source, d.ID)
			continue
		case !ok:
			continue // never acknowledged, never stored: the provider gave up
		}
		res.Stored++
		if acked {
			res.AckedStored++
			res.ackedAt = append(res.ackedAt, first.End)
		}
		if sum := sha256.Sum256(d.Body); !bytes.Equal(sum[:], stored.sum) {
			res.problem("%s %s: stored payload differs from the one sent", d.Source, d.ID)
		}
		if acked && ackedID != 0 && ackedID != stored.id {
			res.problem("%s %s: acknowledged as inbox row %d, stored as %d", d.Source, d.ID, ackedID, stored.id)
		}
		if stored.status == "processed" || stored.status == "skipped" {
			res.Processed++
		} else {
			res.problem("%s %s (row %d) is %s", d.Source, d.ID, stored.id, stored.status)
		}
		switch d.Source {
		case "stripe":
			res.EffectsExpected += 2 // the ledger credit and the fulfillment
			expectedKeys[fulfillKey(d.ID)] = true
			res.countEffect("ledger credit for "+d.PI, credits[d.PI])
			res.countEffect("fulfillment of "+d.ID, fulfilled[fulfillKey(d.ID)])
			if n := refunded[refundKey(d.ID)]; n > 0 {
				res.problem("%s was refunded, though fulfillment was never refused", d.ID)
			}
		case "billing":
			res.EffectsExpected++
			expectedKeys[forwardKey(d.ID)] = true
			res.countEffect("forward of "+d.ID, forwarded[forwardKey(d.ID)])
		case "github":
			if o.githubForward {
				expectedKeys[githubForwardKey(d.ID)] = true
				if n := forwarded[githubForwardKey(d.ID)]; n > 1 {
					res.Doubled += n - 1
					res.problem("github-forward of %s happened %d times", d.ID, n)
				}
			}
		}
	}
	if need := int(minAckedShare * float64(res.Sent)); res.Sent == 0 || res.AckedStored < need {
		res.problem("%d of %d deliveries sent were acknowledged and stored; want at least %d (%.0f %%)",
			res.AckedStored, res.Sent, max(need, 1), 100*minAckedShare)
	}
	for key := range rows {
		if !sent[key] {
			res.problem("inbox row %s was never sent", key)
		}
	}
	// An effect under a key no stored delivery derives is a second effect
	// for something (a key that was not kept across a retry).
	for path, effects := range map[string]map[string]int{fulfillPath: fulfilled, forwardPath: forwarded} {
		for key, n := range effects {
			if !expectedKeys[key] {
				res.Doubled += n
				res.problem("%s effect under unexpected key %s", path, key)
			}
		}
	}
	res.Doubled += doubledByBody(stub, fulfillPath, "payment_intent", res)

	// Nothing was refused downstream, so every saga ends fulfilled.
	q, err = pool.Query(ctx, `SELECT state, count(*) FROM payment_saga WHERE state <> 'fulfilled' GROUP BY 1`)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	for q.Next() {
		var state string
		var n int
		if err := q.Scan(&state, &n); err != nil {
			t.Fatalf("audit: %v", err)
		}
		res.problem("%d payment sagas ended %s", n, state)
	}
	q.Close()
	return res
}

// countEffect books one expected effect that happened n times.
func (r *auditResult) countEffect(what string, n int) {
	switch {
	case n == 1:
		r.EffectsFound++
	case n == 0:
		r.Lost++
		r.problem("missing: %s", what)
	default:
		r.EffectsFound++
		r.Doubled += n - 1
		r.problem("%s happened %d times", what, n)
	}
}

// doubledByBody counts effects beyond the first for one business object
// (field of the request body) across different keys.
func doubledByBody(stub *downstreamstub.Server, path, field string, res *auditResult) int {
	keysByObject := map[string]map[string]bool{}
	effects := stub.Effects(path)
	for _, req := range stub.Requests(path) {
		if effects[req.Key] == 0 {
			continue
		}
		var body map[string]any
		_ = json.Unmarshal(req.Body, &body)
		obj := fmt.Sprint(body[field])
		if keysByObject[obj] == nil {
			keysByObject[obj] = map[string]bool{}
		}
		keysByObject[obj][req.Key] = true
	}
	doubled := 0
	for obj, keys := range keysByObject {
		if len(keys) > 1 {
			doubled += len(keys) - 1
			res.problem("%s %s applied under %d keys", path, obj, len(keys))
		}
	}
	return doubled
}

// report logs the drill's row of the results table (grep "DRILL-ROW") and
// fails the test on any problem.
func (r *auditResult) report(t testing.TB) {
	t.Helper()
	t.Logf("DRILL-ROW | %s | %.0f | %s | %d / %d / %d / %d | %d | %d / %d | %d | %d |",
		r.Drill, r.Rate, r.Faults, r.Sent, r.Acked, r.Stored, r.Processed, r.Duplicates,
		r.EffectsExpected, r.EffectsFound, r.Lost, r.Doubled)
	if len(r.Problems) > 0 {
		t.Errorf("audit of %s found %d problem(s):\n  %s", r.Drill, len(r.Problems), strings.Join(r.Problems, "\n  "))
	}
	if r.Lost != 0 || r.Doubled != 0 {
		t.Errorf("%s: lost %d, doubled %d: must both be 0", r.Drill, r.Lost, r.Doubled)
	}
}
