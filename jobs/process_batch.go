package jobs

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/handlers"
)

var (
	//go:embed sql/inbox_load_many.sql
	inboxLoadManySQL string
	//go:embed sql/inbox_mark_done_many.sql
	inboxMarkDoneManySQL string
	//go:embed sql/inbox_payloads.sql
	inboxPayloadsSQL string
)

// processBatcher runs concurrent process_delivery jobs in shared
// transactions. River hands a worker goroutine one job at a time; a
// transaction per delivery costs a commit, a River completion query (the
// largest single cost in the benchmark's profile: 0.27 ms of PostgreSQL per
// call) and three more round trips. A batch loads its rows in one query,
// runs each delivery's handlers under a savepoint of its own, then records
// every status and completes every job in one statement each, and commits
// once: the effects, statuses and completions of its deliveries still
// commit together, or not at all.
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
	w       *ProcessDeliveryWorker
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
	job    *river.Job[ProcessDeliveryArgs]
	client *river.Client[pgx.Tx]

	d           handlers.Delivery
	outcome     handlers.Outcome
	resourceKey *string
	err         error
	alone       bool // not decided by the batch: process it in a transaction of its own
}

func newProcessBatcher(w *ProcessDeliveryWorker, size int, window, timeout time.Duration, concurrency int, observe func(int)) *processBatcher {
	return &processBatcher{w: w, window: window, maxSize: size, timeout: timeout, slots: make(chan struct{}, concurrency), observe: observe}
}

// process runs job in a batch and returns its result, or alone=true when
// the caller must process it by itself.
func (b *processBatcher) process(ctx context.Context, job *river.Job[ProcessDeliveryArgs]) (d handlers.Delivery, outcome handlers.Outcome, alone bool, err error) {
	m := &batchMember{job: job, client: river.ClientFromContext[pgx.Tx](ctx)}
	b.mu.Lock()
	batch, leader := b.open, false
	if batch == nil {
		batch = &processBatch{full: make(chan struct{}), done: make(chan struct{})}
		b.open, leader = batch, true
	}
	batch.members = append(batch.members, m)
	if len(batch.members) == b.maxSize {
		b.open = nil
		close(batch.full)
	}
	b.mu.Unlock()

	if leader {
		b.lead(batch)
	}
	<-batch.done
	if m.outcome == "" && m.err == nil {
		// Undecided (cannot happen short of a bug): never report success
		// for a delivery the batch did not commit.
		m.alone = true
	}
	return m.d, m.outcome, m.alone, m.err
}

func (b *processBatcher) lead(batch *processBatch) {
	defer close(batch.done)
	timer := time.NewTimer(b.window)
	select {
	case <-batch.full:
	case <-timer.C:
	}
	timer.Stop()
	// Keep the batch open until a transaction slot is free: under load
	// batches grow instead of queueing.
	b.slots <- struct{}{}
	defer func() { <-b.slots }()
	b.mu.Lock()
	if b.open == batch {
		b.open = nil
	}
	members := batch.members
	b.mu.Unlock()
	b.observe(len(members))

	// Members wait for their batch whatever their own contexts say, and
	// the batch is bounded by the job timeout: a job's effects and its
	// completion commit together or not at all.
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	if err := b.runRecovered(ctx, members); err != nil {
		b.w.logger.Warn("processing batch failed; its deliveries are processed one by one",
			"deliveries", len(members), "error", err)
		for _, m := range members {
			*m = batchMember{job: m.job, client: m.client, alone: true}
		}
	}
}

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
		return cmp.Or(cmp.Compare(x.job.Args.InboxID, y.job.Args.InboxID), cmp.Compare(x.job.ID, y.job.ID))
	})
	return pgx.BeginFunc(ctx, b.w.pool, func(tx pgx.Tx) error {
		rows, err := loadDeliveries(ctx, tx, members)
		if err != nil {
			return err
		}
		var done, matched []*batchMember
		for _, m := range members {
			d, ok := rows[m.job.Args.InboxID]
			if !ok {
				m.err = errInboxRowGone
				continue
			}
			d.Provider = b.w.registry.Provider(d.Source)
			m.d = d
			switch {
			case !b.w.registry.Batchable(d):
				m.alone = true
			case !b.w.registry.Matches(d):
				m.outcome = handlers.OutcomeSkipped
				done = append(done, m)
			default:
				matched = append(matched, m)
			}
		}
		if err := loadPayloads(ctx, tx, matched); err != nil {
			return err
		}
		for _, m := range matched {
			var res handlers.Result
			err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
				var err error
				res, err = b.w.registry.ProcessNoWait(ctx, sp, m.client, m.d)
				return err
			})
			switch {
			case errors.Is(err, handlers.ErrResourceBusy):
				m.alone = true
			case err != nil:
				m.err = err
			default:
				m.outcome = res.Outcome
				m.d.Payload = nil // not needed any more; the batch may be large
				done = append(done, m)
				if res.Resource.Key != "" {
					key := res.Resource.Key
					m.resourceKey = &key
				}
			}
		}
		if len(done) == 0 {
			return nil
		}
		return completeBatch(ctx, tx, done)
	})
}

// loadDeliveries reads the members' inbox rows, all but their headers and
// payloads: many events of a busy source match no handler, and those need
// neither (a payload is a detoast and 2–8 KB on the wire, headers a JSON
// decode).
func loadDeliveries(ctx context.Context, tx pgx.Tx, members []*batchMember) (map[int64]handlers.Delivery, error) {
	ids := make([]int64, len(members))
	for i, m := range members {
		ids[i] = m.job.Args.InboxID
	}
	rows, err := tx.Query(ctx, inboxLoadManySQL, pgx.NamedArgs{"ids": ids})
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
// will see.
func loadPayloads(ctx context.Context, tx pgx.Tx, members []*batchMember) error {
	if len(members) == 0 {
		return nil
	}
	byID := make(map[int64][]*batchMember, len(members))
	ids := make([]int64, 0, len(members))
	for _, m := range members {
		byID[m.d.InboxID] = append(byID[m.d.InboxID], m)
		ids = append(ids, m.d.InboxID)
	}
	rows, err := tx.Query(ctx, inboxPayloadsSQL, pgx.NamedArgs{"ids": ids})
	if err != nil {
		return fmt.Errorf("load payloads: %w", err)
	}
	var (
		id      int64
		headers http.Header
		payload []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &headers, &payload}, func() error {
		for _, m := range byID[id] {
			m.d.Headers, m.d.Payload = headers, payload
		}
		headers = nil // a fresh map for the next row
		return nil
	})
	if err != nil {
		return fmt.Errorf("load payloads: %w", err)
	}
	return nil
}

// completeBatch records the statuses of done and completes their jobs, as
// River's JobCompleteTx does for one job, in one statement each.
func completeBatch(ctx context.Context, tx pgx.Tx, done []*batchMember) error {
	slices.SortFunc(done, func(x, y *batchMember) int { return cmp.Compare(x.job.Args.InboxID, y.job.Args.InboxID) })
	n := len(done)
	ids, statuses, keys := make([]int64, n), make([]string, n), make([]*string, n)
	for i, m := range done {
		ids[i], statuses[i], keys[i] = m.job.Args.InboxID, string(m.outcome), m.resourceKey
	}
	if _, err := tx.Exec(ctx, inboxMarkDoneManySQL, pgx.NamedArgs{"ids": ids, "statuses": statuses, "resource_keys": keys}); err != nil {
		return fmt.Errorf("mark inbox rows: %w", err)
	}

	client := done[0].client
	params := &riverdriver.JobSetStateIfRunningManyParams{}
	now := time.Now()
	for _, m := range done {
		p := riverdriver.JobSetStateCompleted(m.job.ID, now, nil)
		params.ID = append(params.ID, p.ID)
		params.Attempt = append(params.Attempt, p.Attempt)
		params.ErrData = append(params.ErrData, p.ErrData)
		params.FinalizedAt = append(params.FinalizedAt, p.FinalizedAt)
		params.MetadataDoMerge = append(params.MetadataDoMerge, false)
		params.MetadataUpdates = append(params.MetadataUpdates, nil)
		params.ScheduledAt = append(params.ScheduledAt, p.ScheduledAt)
		params.State = append(params.State, p.State)
	}
	completed, err := client.Pilot().JobSetStateIfRunningMany(ctx, client.Driver().UnwrapExecutor(tx), params)
	if err != nil {
		return fmt.Errorf("complete jobs: %w", err)
	}
	// A job that is no longer running (River rescued it as stuck, say)
	// must not have its effects committed here: fail the batch, and each
	// delivery is decided alone, as JobCompleteTx would.
	for _, j := range completed {
		if j.State != rivertype.JobStateCompleted {
			return fmt.Errorf("complete jobs: job %d is %s", j.ID, j.State)
		}
	}
	if len(completed) != n {
		return fmt.Errorf("complete jobs: %d of %d were still running", len(completed), n)
	}
	return nil
}
