package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

// processBatcher runs concurrent process_delivery jobs, and the deliveries of
// process_deliveries jobs (a batchGroup each), in shared transactions. River
// hands a worker goroutine one job at a time; a transaction per delivery
// costs a commit, a River completion query (the largest single cost in the
// benchmark's profile: bench/README.md, Design decisions, "Processing
// batches") and three more round trips. A batch loads its rows in one query,
// runs each delivery's handlers under a savepoint of its own, then records
// every status and completes every job in one statement each, and commits
// once: the effects, statuses and completions of its deliveries still commit
// together, or not at all.
//
// Only deliveries whose handlers allow it (handlers.Registration.Batch)
// are batched, as are those no handler matches; the others are processed
// alone, so a slow handler never holds up a batch. Each delivery gets the
// outcome it would have had alone:
//   - a handler error rolls back to its savepoint and fails only that job;
//   - a delivery whose resource another transaction holds is not waited for
//     (two batches could wait on each other): it is processed alone after
//     the batch, as are all of a batch's deliveries if the batch itself
//     fails (a serialization error, a deadlock, a job no longer running).
//
// No goroutine runs in the background: the first job to arrive leads the
// batch. It waits the window (or until the batch is full), then for a free
// transaction slot while later jobs keep joining, runs the batch, and hands
// every member its result.
type processBatcher struct {
	w       *processDeliveryWorker
	window  time.Duration
	maxSize int
	timeout time.Duration
	slots   chan struct{} // one per batch transaction allowed at once
	observe func(n int)
	mu      sync.Mutex
	open    *processBatch // accepting members; nil if none
}

type processBatch struct {
	members []*batchMember
	full    chan struct{} // closed when members reaches maxSize
	done    chan struct{} // closed when every member has its result
}

type batchMember struct {
	ctx     context.Context // the job's: its deadline bounds the batch
	inboxID int64
	job     *river.Job[ProcessDeliveryArgs] // its own job; nil in a group
	group   *batchGroup                     // the process_deliveries job it came in; nil with a job of its own
	client  *river.Client[pgx.Tx]

	d           handlers.Delivery
	outcome     handlers.Outcome
	resourceKey *string
	stale       *bool
	err         error
	alone       bool // not decided by the batch: process it in a transaction of its own
}

// batchGroup is a process_deliveries job's deliveries in a batch: they
// join it together, and the batch completes the group's job with them and
// gives those it does not decide their follow-ups (followUpTx) in its
// transaction. Should the batch not commit, its verdict is the group's:
// err, or alone (the group's worker runs it in a transaction of its own).
type batchGroup struct {
	job     *river.Job[ProcessDeliveriesArgs]
	pw      *processDeliveriesWorker
	client  *river.Client[pgx.Tx]
	members []*batchMember

	committed bool
	err       error
	alone     bool
}

// jobID is the id of the job that holds m: its own or its group's.
func (m *batchMember) jobID() int64 {
	if m.group != nil {
		return m.group.job.ID
	}
	return m.job.ID
}

// groupsOf is the groups among members, each once.
func groupsOf(members []*batchMember) []*batchGroup {
	var gs []*batchGroup
	for _, m := range members {
		if m.group != nil && !slices.Contains(gs, m.group) {
			gs = append(gs, m.group)
		}
	}
	return gs
}

func newProcessBatcher(w *processDeliveryWorker, size int, window, timeout time.Duration, concurrency int, observe func(int)) *processBatcher {
	return &processBatcher{w: w, window: window, maxSize: size, timeout: timeout, slots: make(chan struct{}, concurrency), observe: observe}
}

// process runs job in a batch and returns its result, or alone=true when
// the caller must process it by itself.
func (b *processBatcher) process(ctx context.Context, job *river.Job[ProcessDeliveryArgs]) (d handlers.Delivery, outcome handlers.Outcome, alone bool, err error) {
	m := &batchMember{ctx: ctx, inboxID: job.Args.InboxID, job: job, client: river.ClientFromContext[pgx.Tx](ctx)}
	b.join(ctx, m)
	if m.outcome == "" && m.err == nil {
		// Undecided (cannot happen short of a bug): never report success
		// for a delivery the batch did not commit.
		m.alone = true
	}
	return m.d, m.outcome, m.alone, m.err
}

// processGroup runs g's deliveries in a batch; g says how it ended.
func (b *processBatcher) processGroup(ctx context.Context, g *batchGroup) {
	b.join(ctx, g.members...)
}

// join adds ms to the open batch, or opens one and leads it, and returns
// once the batch has decided them.
func (b *processBatcher) join(ctx context.Context, ms ...*batchMember) {
	b.mu.Lock()
	batch, leader := b.open, false
	if batch == nil {
		batch = &processBatch{full: make(chan struct{}), done: make(chan struct{})}
		b.open, leader = batch, true
	}
	batch.members = append(batch.members, ms...)
	if len(batch.members) >= b.maxSize {
		b.open = nil
		close(batch.full)
	}
	b.mu.Unlock()

	if leader {
		b.lead(ctx, batch)
	}
	<-batch.done
}

func (b *processBatcher) lead(ctx context.Context, batch *processBatch) {
	defer close(batch.done)
	timer := time.NewTimer(b.window)
	select {
	case <-batch.full:
	case <-timer.C:
	}
	timer.Stop()
	// Keep the batch open until a transaction slot is free: under load
	// batches grow instead of queueing. The leader's job deadline is the
	// batch's earliest: past it, every member is better off alone.
	var slot bool
	select {
	case b.slots <- struct{}{}:
		slot = true
		defer func() { <-b.slots }()
	case <-ctx.Done():
	}
	b.mu.Lock()
	if b.open == batch {
		b.open = nil
	}
	members := batch.members
	b.mu.Unlock()
	if !slot {
		b.decide(members, func(int64) error { return nil })
		return
	}
	b.observe(len(members))

	// Members wait for their batch whatever their own contexts say, so the
	// batch ends by the earliest of their job deadlines: none of them
	// outlives River's job timeout, which the stuck-job rescue relies on.
	// The leader's context values (River's client) stay for the handlers.
	deadline := time.Now().Add(b.timeout)
	for _, m := range members {
		if d, ok := m.ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
	}
	runCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	err := b.runRecovered(runCtx, members)
	if err == nil {
		for _, g := range groupsOf(members) {
			g.committed = true
		}
		return
	}
	var (
		commitErr *batchCommitError
		takenErr  *jobsTakenOverError
	)
	switch {
	case errors.As(err, &commitErr):
		// The commit may have happened: running the deliveries again here
		// could apply their effects twice. River retries each job; if the
		// commit happened, the job is completed and there is no retry.
		b.w.logger.Error("processing batch commit failed; River retries its jobs", "deliveries", len(members), "error", err)
		b.decide(members, func(int64) error { return err })
	case errors.As(err, &takenErr):
		b.w.logger.Warn("processing batch held jobs River had already given to another run; the rest are processed one by one",
			"deliveries", len(members), "jobs", takenErr.ids)
		b.decide(members, func(jobID int64) error {
			if slices.Contains(takenErr.ids, jobID) {
				return fmt.Errorf("job %d: %w", jobID, errJobTakenOver)
			}
			return nil
		})
	default:
		b.w.logger.Warn("processing batch failed; its deliveries are processed one by one",
			"deliveries", len(members), "error", err)
		b.decide(members, func(int64) error { return nil })
	}
}

// decide resets members whose batch did not commit: each gets errOf's
// error for the job that holds it, or is processed alone if that is nil.
// A group's verdict is its job's.
func (b *processBatcher) decide(members []*batchMember, errOf func(jobID int64) error) {
	for _, m := range members {
		err := errOf(m.jobID())
		if g := m.group; g != nil {
			g.err, g.alone = err, err == nil
			*m = batchMember{ctx: m.ctx, inboxID: m.inboxID, group: g, client: m.client}
			continue
		}
		*m = batchMember{ctx: m.ctx, inboxID: m.inboxID, job: m.job, client: m.client, err: err, alone: err == nil}
	}
}

// batchCommitError is a failed COMMIT: whether it happened is unknown.
type batchCommitError struct{ err error }

func (e *batchCommitError) Error() string { return "commit processing batch: " + e.err.Error() }
func (e *batchCommitError) Unwrap() error { return e.err }

// runRecovered is run with a panic turned into the batch's failure: the
// leader's panic must not leave its members without a result.
func (b *processBatcher) runRecovered(ctx context.Context, members []*batchMember) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("processing batch panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return b.run(ctx, members)
}

// run processes members in one transaction.
func (b *processBatcher) run(ctx context.Context, members []*batchMember) error {
	slices.SortFunc(members, func(x, y *batchMember) int {
		return cmp.Or(cmp.Compare(x.inboxID, y.inboxID), cmp.Compare(x.jobID(), y.jobID()))
	})
	tx, err := b.w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if err := b.runTx(ctx, tx, members); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return &batchCommitError{err}
	}
	return nil
}

// runTx does run's work inside tx.
func (b *processBatcher) runTx(ctx context.Context, tx pgx.Tx, members []*batchMember) error {
	done, err := handleBatchTx(ctx, tx, b.w.registry, b.w.handOff, members)
	if err != nil {
		return err
	}
	var js []jobAttempt
	for _, m := range done {
		if m.job != nil {
			js = append(js, attemptOf(m.job))
		}
	}
	for _, g := range groupsOf(members) {
		if err := g.pw.followUpTx(ctx, tx, g.job, g.client, g.members); err != nil {
			return err
		}
		js = append(js, attemptOf(g.job))
	}
	if len(js) == 0 {
		return nil
	}
	return completeTx(ctx, tx, js, outcomesOf(done), time.Now())
}

// handleBatchTx runs the handlers of members in tx, each delivery under a
// savepoint of its own, and returns the members it decided (outcome set):
// the caller records their outcomes and completes their jobs in tx. Every
// other member has err set, or alone: to be processed by itself. An error
// fails the whole batch: tx must be rolled back.
func handleBatchTx(ctx context.Context, tx pgx.Tx, registry *handlers.Registry, handOff *inbox.HandOff, members []*batchMember) ([]*batchMember, error) {
	rows, err := loadDeliveries(ctx, tx, members)
	if err != nil {
		return nil, err
	}
	var done, matched []*batchMember
	for _, m := range members {
		d, ok := rows[m.inboxID]
		if !ok {
			m.err = errInboxRowGone
			handOff.Forget(m.inboxID)
			continue
		}
		d.Provider = registry.Provider(d.Source)
		m.d = d
		switch {
		case !registry.Batchable(d):
			m.alone = true
			handOff.Forget(m.inboxID) // processed alone, from its row
		case !registry.Matches(d):
			m.outcome = handlers.OutcomeSkipped
			done = append(done, m)
			handOff.Forget(m.inboxID)
		default:
			matched = append(matched, m)
		}
	}
	matched, err = loadPayloads(ctx, tx, handOff, matched)
	if err != nil {
		return nil, err
	}
	// Each under a savepoint of its own: a failing delivery rolls back
	// alone. A statement one delivery carried into a later round trip
	// failing fails the batch: its deliveries are then processed alone.
	if len(matched) > 0 {
		ds := make([]handlers.Delivery, len(matched))
		for i, m := range matched {
			ds[i] = m.d
		}
		results, errs, err := registry.ProcessBatch(ctx, tx, matched[0].client, ds)
		if err != nil {
			return nil, err
		}
		for i, m := range matched {
			switch err := errs[i]; {
			case errors.Is(err, handlers.ErrResourceBusy):
				m.alone = true
			case err != nil:
				m.err = err
			default:
				m.outcome = results[i].Outcome
				m.d.Payload = nil // not needed any more; the batch may be large
				done = append(done, m)
				m.resourceKey, m.stale = resourceFacts(results[i])
			}
		}
	}
	return done, nil
}

// loadDeliveries reads the members' inbox rows, all but their headers and
// payloads: many events of a busy source match no handler, and those need
// neither (a payload is a detoast and 2–8 KB on the wire, headers a JSON
// decode).
func loadDeliveries(ctx context.Context, tx pgx.Tx, members []*batchMember) (map[int64]handlers.Delivery, error) {
	ids := make([]int64, len(members))
	for i, m := range members {
		ids[i] = m.inboxID
	}
	rows, err := inbox.LoadMany(ctx, tx, ids)
	if err != nil {
		return nil, fmt.Errorf("load inbox rows: %w", err)
	}
	out := make(map[int64]handlers.Delivery, len(members))
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("load inbox rows: %w", err)
		}
		out[d.InboxID] = d
	}
	return out, rows.Err()
}

// loadPayloads fills the headers and payloads of the members a handler
// will see, those ingest handed on first, and returns those whose rows are
// still there.
func loadPayloads(ctx context.Context, tx pgx.Tx, handOff *inbox.HandOff, members []*batchMember) ([]*batchMember, error) {
	if len(members) == 0 {
		return nil, nil
	}
	byID := make(map[int64][]*batchMember, len(members))
	for _, m := range members {
		byID[m.d.InboxID] = append(byID[m.d.InboxID], m)
	}
	ids := make([]int64, 0, len(byID))
	found := make(map[int64]bool, len(byID))
	for id, ms := range byID {
		headers, payload, ok := handOff.Take(id)
		if !ok {
			ids = append(ids, id)
			continue
		}
		for _, m := range ms {
			m.d.Headers, m.d.Payload = canonicalHeaders(headers), payload
		}
		found[id] = true
	}
	if len(ids) == 0 {
		return members, nil
	}
	rows, err := inbox.LoadPayloads(ctx, tx, ids)
	if err != nil {
		return nil, fmt.Errorf("load payloads: %w", err)
	}
	var (
		id      int64
		headers http.Header
		payload []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &headers, &payload}, func() error {
		for _, m := range byID[id] {
			m.d.Headers, m.d.Payload = canonicalHeaders(headers), payload
		}
		found[id] = true
		headers = nil // a fresh map for the next row
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load payloads: %w", err)
	}
	// This second read has a snapshot of its own: retention may have
	// deleted a row since the first.
	var loaded []*batchMember
	for _, m := range members {
		if found[m.d.InboxID] {
			loaded = append(loaded, m)
		} else {
			m.err = errInboxRowGone
		}
	}
	return loaded, nil
}

// outcomesOf is what done's inbox_outcome rows record.
func outcomesOf(done []*batchMember) []processed {
	ps := make([]processed, len(done))
	for i, m := range done {
		ps[i] = processed{inboxID: m.inboxID, outcome: m.outcome, resourceKey: m.resourceKey, stale: m.stale}
	}
	return ps
}
