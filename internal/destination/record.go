package destination

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/attempts_insert.sql
	attemptsInsertSQL string
	//go:embed sql/sends_record.sql
	sendsRecordSQL string
	//go:embed sql/circuit_failure.sql
	circuitFailureSQL string
	//go:embed sql/circuit_success.sql
	circuitSuccessSQL string
	//go:embed sql/sends_wake.sql
	sendsWakeSQL string
	//go:embed sql/state_lock.sql
	stateLockSQL string
	//go:embed sql/chain_lock_many.sql
	chainLockManySQL string
	//go:embed sql/chain_finish_many.sql
	chainFinishManySQL string
	//go:embed sql/claims_release.sql
	claimsReleaseSQL string
)

// customPlansSQL and defaultPlansSQL bracket statements that the server
// plans for their arguments on every call, in the sender's transaction.
const (
	customPlansSQL  = "SET LOCAL plan_cache_mode = force_custom_plan"
	defaultPlansSQL = "SET LOCAL plan_cache_mode TO DEFAULT"
)

// noSortSQL and sortSQL bracket a statement planned without a sort where
// an index gives the order (queueFinishOrdered).
const (
	noSortSQL = "SET LOCAL enable_sort = off"
	sortSQL   = "SET LOCAL enable_sort TO DEFAULT"
)

// result is what became of one claimed send in this process.
type result struct {
	send *loadedSend
	res  response
	// skipped: a stale event of a skip_stale route, not sent.
	skipped bool
	// gone: the delivery's inbox row was deleted; nothing can be sent.
	gone bool
	// cut: the request was cut short by shutdown; the send is left to any
	// sender, with no attempt spent.
	cut bool
	// filtered: no route sends it now (an operator retried it after a
	// route's filter changed).
	filtered bool
	// routeErr: its route's filter or transform failed to evaluate; no
	// request was made, and none will be until an operator retries it.
	routeErr error
}

// requested reports whether a request was made for the result: a send
// skipped, gone, filtered out or whose route failed tells the circuit
// nothing about the destination.
func (r *result) requested() bool {
	return !r.skipped && !r.gone && !r.filtered && r.routeErr == nil
}

// outcome is what a result makes of its send.
type outcome struct {
	state      string // pending (retry), succeeded, failed, skipped
	attempted  bool
	lastStatus *int
	lastError  *string
	retryIn    time.Duration // pending: the wait before the next attempt
}

// outcomeOf applies the retry schedule, Retry-After and max_age to a
// result.
func outcomeOf(d *dest, r result) outcome {
	switch {
	case r.skipped:
		return outcome{state: "skipped"}
	case r.filtered:
		msg := "no route sends it as configured now (filtered out)"
		return outcome{state: "skipped", lastError: &msg}
	case r.routeErr != nil:
		msg := r.routeErr.Error()
		return outcome{state: "failed", lastError: &msg}
	case r.gone:
		msg := "the delivery's inbox row is gone"
		return outcome{state: "failed", lastError: &msg}
	}
	o := outcome{state: "succeeded", attempted: true}
	if r.res.status != 0 {
		o.lastStatus = &r.res.status
	}
	if r.res.ok() {
		return o
	}
	msg := r.res.describe()
	o.lastError = &msg
	attempt := r.send.Attempts + 1
	age := time.Since(r.send.CreatedAt)
	o.retryIn = nextRetry(d, attempt, r.res.retryAfter, d.Retry.MaxAge.Std()-age)
	switch {
	case attempt > len(d.Retry.Schedule):
		o.state = "failed"
	case age+o.retryIn > d.Retry.MaxAge.Std():
		o.state = "failed"
	default:
		o.state = "pending"
	}
	return o
}

// orderedEnd is an ordered send whose turn ends: it succeeded, or failed
// or was skipped for good.
type orderedEnd struct {
	send      *loadedSend
	succeeded bool
}

// recorded is what a cycle recorded, to report once it commits.
type recorded struct {
	sends    []result
	outcomes []outcome
	opened   bool // the circuit is open
	closed   bool // the circuit was open and a success closed it
	woke     bool // a send of the destination became due
}

// recording is a flush in the sender's transaction. Its first part goes
// in the cycle's first round trip (queueRecord); what depends on that
// part's answers, the wake of a closed circuit's sends and the ordered
// sends' turns, goes in the second (queueTurns).
type recording struct {
	rec    recorded
	moved  map[int64]bool // the sends whose claims this flush still held
	tally  circuitTally
	handed bool // a resource's turn went to a waiting send
}

// queueRecord queues the results of a sender's requests: the attempts,
// the sends' states (a retry's due time, a final state) and the circuit.
// A send whose claim was taken over by another sender (its request
// outlived the claim) is left to that sender; its attempt is recorded all
// the same. again says an earlier try of the same record failed, perhaps
// after its commit: a send it moved is not moved again (its claim is
// gone), and its attempts and failures are not added again.
func queueRecord(b *pgx.Batch, d *dest, results []result, again bool) *recording {
	rc := &recording{}
	var cut []result
	for _, r := range results {
		if r.cut {
			cut = append(cut, r)
			continue
		}
		rc.rec.sends = append(rc.rec.sends, r)
		rc.rec.outcomes = append(rc.rec.outcomes, outcomeOf(d, r))
	}
	queueReleaseClaims(b, d, cut)
	if sends, outcomes := rc.rec.sends, rc.rec.outcomes; len(sends) > 0 {
		queueRecordSends(b, d, sends, outcomes, &rc.moved)
		rc.tally = tallyCircuit(sends)
		rc.tally.queueSuccess(b, d)
		rc.tally.queueFailures(b, d, again, &rc.rec.opened)
		queueAttempts(b, sends, outcomes, again)
	}
	return rc
}

// queueTurns queues what the first round trip's answers call for: the
// sends that waited for a circuit it closed are woken, and the turns of
// the ordered sends it finished are ended.
func (rc *recording) queueTurns(b *pgx.Batch, d *dest) {
	if rc.tally.closed {
		// The sends that waited for the circuit go now, at the
		// configured rate, instead of at their retries' time.
		b.Queue(sendsWakeSQL, pgnamed.Args{"destination": d.Name})
	}
	var finished []orderedEnd
	for i, r := range rc.rec.sends {
		if rc.moved[r.send.ID] && r.send.Ordered && rc.rec.outcomes[i].state != "pending" {
			finished = append(finished, orderedEnd{send: r.send, succeeded: rc.rec.outcomes[i].state == "succeeded"})
		}
	}
	queueFinishOrdered(b, d, finished, &rc.handed)
}

// done is what the recording stored, once both round trips ran.
func (rc *recording) done() recorded {
	rec := rc.rec
	rec.closed = rc.tally.closed
	rec.woke = rc.tally.closed || rc.handed
	return rec
}

// queueReleaseClaims queues the release of the claims of requests cut
// short by shutdown.
func queueReleaseClaims(b *pgx.Batch, d *dest, cut []result) {
	if len(cut) == 0 {
		return
	}
	ids, slots, holders := make([]int64, len(cut)), make([]int32, len(cut)), make([]string, len(cut))
	for i, r := range cut {
		ids[i], slots[i], holders[i] = r.send.ID, r.send.slot, r.send.holder
	}
	b.Queue(claimsReleaseSQL, pgnamed.Args{
		"destination": d.Name, "ids": ids, "slots": slots, "holders": holders,
	})
}

// queueAttempts queues the record of every request made, in one
// statement.
func queueAttempts(b *pgx.Batch, sends []result, outcomes []outcome, again bool) {
	var (
		ids                 []int64
		attempts, durations []int32
		at                  []time.Time
		statuses            []*int
		errs, responses     []*string
		stales, probes      []bool
	)
	for i, r := range sends {
		if !outcomes[i].attempted {
			continue
		}
		ids = append(ids, r.send.ID)
		attempts = append(attempts, int32(r.send.Attempts+1))
		at = append(at, r.res.at)
		durations = append(durations, int32(r.res.took.Milliseconds()))
		statuses = append(statuses, outcomes[i].lastStatus)
		errs = append(errs, outcomes[i].lastError)
		responses = append(responses, nilIfEmpty(r.res.body))
		stales = append(stales, r.res.stale)
		probes = append(probes, r.res.probe)
	}
	if len(ids) == 0 {
		return
	}
	b.Queue(attemptsInsertSQL, pgnamed.Args{
		"send_ids": ids, "attempts": attempts, "attempted_ats": at, "duration_ms": durations,
		"statuses": statuses, "errors": errs, "responses": responses, "stales": stales, "probes": probes, "again": again,
	})
}

// queueRecordSends queues the move of every send to its outcome, in one
// statement, and sets moved to the sends it moved.
func queueRecordSends(b *pgx.Batch, d *dest, sends []result, outcomes []outcome, moved *map[int64]bool) {
	n := len(sends)
	var (
		ids       = make([]int64, n)
		slots     = make([]int32, n)
		holders   = make([]string, n)
		states    = make([]string, n)
		attempted = make([]int32, n)
		stales    = make([]bool, n)
		statuses  = make([]*int, n)
		errs      = make([]*string, n)
		due       = make([]*time.Time, n)
	)
	now := time.Now()
	for i, r := range sends {
		o := outcomes[i]
		ids[i], slots[i], holders[i], states[i], stales[i] = r.send.ID, r.send.slot, r.send.holder, o.state, r.send.stale
		statuses[i], errs[i] = o.lastStatus, o.lastError
		if o.attempted {
			attempted[i] = 1
		}
		if o.state == "pending" {
			t := now.Add(o.retryIn)
			due[i] = &t
		}
	}
	b.Queue(sendsRecordSQL, pgnamed.Args{
		"destination": d.Name, "ids": ids, "slots": slots, "holders": holders, "states": states, "attempted": attempted, "stales": stales,
		"last_statuses": statuses, "last_errors": errs, "next_attempt_ats": due,
	}).Query(func(rows pgx.Rows) error {
		movedIDs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("record sends: %w", err)
		}
		*moved = make(map[int64]bool, len(movedIDs))
		for _, id := range movedIDs {
			(*moved)[id] = true
		}
		return nil
	})
}

// circuitTally is what a flush's requests tell the circuit breaker, in
// the order they ended: a success resets the failure count, so only the
// failures after the last success count.
type circuitTally struct {
	anyOK       bool
	failures    int
	lastFailure *result
	closed      bool // the success closed an open circuit (set once the batch ran)
}

// tallyCircuit counts the requests' successes and the failures after the
// last success.
func tallyCircuit(sends []result) circuitTally {
	var (
		t      circuitTally
		lastOK time.Time
	)
	for i := range sends {
		r := &sends[i]
		if !r.requested() {
			continue
		}
		end := r.res.at.Add(r.res.took)
		if r.res.ok() && (!t.anyOK || end.After(lastOK)) {
			lastOK, t.anyOK = end, true
		}
	}
	for i := range sends {
		r := &sends[i]
		if !r.requested() || r.res.ok() || (t.anyOK && !r.res.at.Add(r.res.took).After(lastOK)) {
			continue
		}
		t.failures++
		if t.lastFailure == nil || r.res.at.After(t.lastFailure.res.at) {
			t.lastFailure = r
		}
	}
	return t
}

// queueSuccess queues the reset of the failure count a success makes,
// which tells whether it closed the circuit.
func (t *circuitTally) queueSuccess(b *pgx.Batch, d *dest) {
	if !t.anyOK {
		return
	}
	b.Queue(circuitSuccessSQL, pgnamed.Args{"destination": d.Name}).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&t.closed); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("close circuit: %w", err)
		}
		return nil
	})
}

// queueFailures queues the count of the failures after the last
// success, which may open the circuit; *open is set to whether it is.
// Recorded again, they are counted only if the earlier try did not
// commit.
func (t *circuitTally) queueFailures(b *pgx.Batch, d *dest, again bool, open *bool) {
	if t.failures == 0 {
		return
	}
	last := t.lastFailure
	b.Queue(circuitFailureSQL, pgnamed.Args{
		"destination": d.Name, "failures": t.failures, "attempted_at": last.res.at, "last_error": last.res.describe(),
		"threshold": d.Circuit.Failures, "probe_every": d.Circuit.ProbeEvery.Std(),
		"again": again, "send_id": last.send.ID, "attempt": last.send.Attempts + 1,
	}).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(open); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("count failures: %w", err)
		}
		return nil
	})
}

// queueFinishOrdered queues the end of finished ordered sends' turns: the
// destination's state row is locked, so that no claim puts new sends in
// line meanwhile, then the resources' rows (chain_lock_many.sql); the next
// statement sees every send put in line before. On success what the
// destination got of each resource moves forward, and each resource's
// turn is handed on or freed. *handed is set when a waiting send became
// due.
func queueFinishOrdered(b *pgx.Batch, d *dest, finished []orderedEnd, handed *bool) {
	if len(finished) == 0 {
		return
	}
	n := len(finished)
	var (
		sources, resources = make([]string, n), make([]string, n)
		succeeded, receipt = make([]bool, n), make([]bool, n)
		at, receivedAt     = make([]time.Time, n), make([]time.Time, n)
	)
	for i, f := range finished {
		sources[i], resources[i], succeeded[i] = f.send.Source, *f.send.ResourceKey, f.succeeded
		at[i], receivedAt[i], receipt[i] = f.send.Resource.At, f.send.Resource.ReceivedAt, f.send.Resource.AtIsReceipt
	}
	b.Queue(stateLockSQL, pgnamed.Args{"destination": d.Name})
	// The turns' two statements are planned for their arguments on every
	// call. A generic plan the server caches in a destination's first
	// seconds, when its turn and send tables hold a few rows, scans them
	// whole for every send, and keeps doing so as they grow until their
	// first autoanalyze (bench/README.md, Design decisions, "Turn
	// statements' plans"). Their planning costs less than those scans;
	// the claim's statements, dearer to plan and cheap as cached, keep
	// the default.
	b.Queue(customPlansSQL)
	b.Queue(chainLockManySQL, pgnamed.Args{"destination": d.Name, "sources": sources, "resource_keys": resources})
	// A resource's next waiting send is read at the head of its line
	// (destination_send_chain_idx), never by sorting the destination's
	// waiting sends: from statistics taken while few sends waited, the
	// planner rates both at one row, and under a backlog the sort read
	// every waiting send for each finished one, and sending stalled
	// (bench/README.md, Design decisions, "Turn statements' plans").
	b.Queue(noSortSQL)
	b.Queue(chainFinishManySQL, pgnamed.Args{
		"destination": d.Name, "sources": sources, "resource_keys": resources, "succeeded": succeeded,
		"event_ats": at, "event_received_ats": receivedAt, "at_is_receipts": receipt,
	}).Exec(func(tag pgconn.CommandTag) error {
		*handed = tag.RowsAffected() > 0
		return nil
	})
	b.Queue(sortSQL)
	b.Queue(defaultPlansSQL)
}

// report tells metrics and the log what the recorded results were.
func (s *Service) report(ctx context.Context, d *dest, rec recorded) {
	if rec.closed {
		// Its opening was logged with every failed send; without this
		// line a log reader would think it still open.
		s.logger.Info("destination: circuit closed; the waiting sends go now", "destination", d.Name)
	}
	for i, r := range rec.sends {
		o := rec.outcomes[i]
		if o.attempted {
			label := o.state // succeeded or failed
			if label == "pending" {
				label = "retry"
			}
			s.cfg.Observe(d.Name, label, r.res.took)
		}
		if r.routeErr != nil {
			s.cfg.Observe(d.Name, outcomeRouteFailed, 0)
		}
		if o.state == "succeeded" {
			continue // the hot path logs nothing
		}
		log := s.logger.With("destination", d.Name, "source", r.send.Source, "delivery_id", r.send.DeliveryID,
			"webhook_id", r.send.Key, "attempt", r.send.Attempts+1, "status", r.res.status, "duration", r.res.took.String())
		switch o.state {
		case "skipped":
			log.Debug("destination: send skipped", "reason", cmp.Or(derefOr(o.lastError), "stale event"))
		case "failed":
			log.Error("destination: send failed for good; an operator may retry it", "error", *o.lastError)
		default:
			if rec.opened {
				log = log.With("circuit", "open")
			}
			log.Log(ctx, slog.LevelWarn, "destination: send failed; retrying with the same webhook-id",
				"error", *o.lastError, "retry_in", o.retryIn.String())
		}
	}
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nextRetry is the wait before retry number attempt: the schedule's,
// jittered, or a longer Retry-After cut to left, what remains of the
// send's max_age. A destination that asks for longer than the window gets
// one more try as it closes, not none; the schedule's own wait is not cut
// (past the window the send fails, as max_age says).
func nextRetry(d *dest, attempt int, retryAfter, left time.Duration) time.Duration {
	i := min(attempt, len(d.Retry.Schedule)) - 1
	return max(jitter(d.Retry.Schedule[i].Std()), min(retryAfter, left))
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
