package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/trace"
)

// batcher groups concurrent deliveries into one transaction. A runner takes a
// first delivery, gathers what arrives within the window (up to maxBatch),
// and commits them together. One batch forms at a time while the others
// commit: if every idle runner took deliveries at once, the arrivals of one
// window would split into as many one-row transactions, and the batch's two
// statements cost the database nearly as much for two rows as for ten
// (bench/README.md, Design decisions, "Ingest batching"). But a batch that
// has handOff deliveries closes early when another runner is free to gather
// the next: a burst (a closed loop of 32 clients answered by one commit) then
// commits in parallel batches instead of one large batch at a time, which
// slowed such a closed loop. Each request is answered only after the commit
// that holds its row, with the outcome it would have had alone. If PostgreSQL
// refuses a statement of the batch, nothing of it is stored and each delivery
// is recorded alone (one bad row must not fail its neighbours); if the
// database cannot be reached, every delivery of the batch gets the error (a
// 503).
type batcher struct {
	inbox    *Inbox
	window   time.Duration
	maxBatch int
	timeout  time.Duration
	observe  func(n int)

	in        chan *pending
	quit      chan struct{} // closed by close: runners stop taking deliveries
	gathering sync.Mutex    // held by the runner whose batch is forming
	free      atomic.Int32  // runners waiting to gather
	done      sync.WaitGroup
}

type pending struct {
	d      Delivery
	span   trace.SpanContext // the request's, which the batch's span links
	result chan batchResult  // buffered: the batch never waits on a request
}

type batchResult struct {
	rec Recorded
	err error
}

// newBatcher starts the runners (one per transaction that may be in flight
// at once).
func newBatcher(inbox *Inbox, window time.Duration, maxBatch, runners int, timeout time.Duration, observe func(int)) *batcher {
	b := &batcher{inbox: inbox, window: window, maxBatch: maxBatch, timeout: timeout, observe: observe,
		in: make(chan *pending), quit: make(chan struct{})}
	b.done.Add(runners)
	for i := 0; i < runners; i++ {
		go b.run()
	}
	return b
}

// record hands d to the next batch and waits for that batch's commit.
func (b *batcher) record(ctx context.Context, d Delivery) (Recorded, error) {
	p := &pending{d: d, span: trace.SpanContextFromContext(ctx), result: make(chan batchResult, 1)}
	select {
	case b.in <- p:
	case <-b.quit:
		return Recorded{}, errShuttingDown
	case <-ctx.Done():
		return Recorded{}, ctx.Err()
	}
	select {
	case r := <-p.result:
		return r.rec, r.err
	case <-ctx.Done():
		// The batch may still commit it: the provider's retry will then be
		// a duplicate. Never a 2xx without the commit.
		return Recorded{}, ctx.Err()
	}
}

func (b *batcher) run() {
	defer b.done.Done()
	for {
		b.free.Add(1)
		b.gathering.Lock()
		b.free.Add(-1)
		select {
		case first := <-b.in:
			batch := b.gather(first)
			b.gathering.Unlock()
			b.commit(batch)
		case <-b.quit:
			b.gathering.Unlock()
			return
		}
	}
}

// handOff is the batch size at which a forming batch closes if another runner
// is free: the benchmark's closed loop at 32 connections made batches of 7-8
// with every runner gathering (bench/README.md, Design decisions, "Ingest
// batching").
const handOff = 8

// gather forms a batch: first, then what arrives until the window closes,
// the batch is full, or it has handOff deliveries and another runner is
// free to gather the next.
func (b *batcher) gather(first *pending) []*pending {
	batch := []*pending{first}
	timer := time.NewTimer(b.window)
	defer timer.Stop()
	for len(batch) < b.maxBatch {
		select {
		case p := <-b.in:
			batch = append(batch, p)
			if len(batch) >= handOff && b.free.Load() > 0 {
				return batch
			}
		case <-timer.C:
			return batch
		case <-b.quit:
			return batch
		}
	}
	return batch
}

func (b *batcher) commit(batch []*pending) {
	// Rows are inserted in key order, so two batches that share deliveries
	// (a provider's retry racing its original) lock them in the same order
	// and never deadlock. Stable: repeats keep their arrival order.
	slices.SortStableFunc(batch, func(x, y *pending) int {
		return cmp.Or(cmp.Compare(x.d.Source, y.d.Source), cmp.Compare(x.d.DeliveryID, y.d.DeliveryID))
	})
	ds := make([]Delivery, len(batch))
	for i, p := range batch {
		ds[i] = p.d
	}
	b.observe(len(batch))
	ctx, span := startBatchSpan(batch)
	defer span.End()
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	var (
		recs []Recorded
		errs []error
	)
	err := func() (err error) {
		// A panic fails the batch (every request gets the 503) instead of
		// killing the runner and leaving its requests unanswered.
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("ingest batch panicked: %v", p)
			}
		}()
		recs, errs, err = b.inbox.recordMany(ctx, ds)
		return err
	}()
	cancel()
	if err != nil && refusedByDatabase(err) {
		// One delivery the database refuses (a value it cannot store, a
		// trigger) must not fail its neighbours: nothing of the batch was
		// stored, so each is recorded alone and gets its own answer.
		for _, p := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
			rec, err := b.inbox.Record(ctx, p.d)
			cancel()
			p.result <- batchResult{rec: rec, err: err}
		}
		return
	}
	for i, p := range batch {
		if err != nil {
			p.result <- batchResult{err: err}
			continue
		}
		p.result <- batchResult{rec: recs[i], err: errs[i]}
	}
}

// refusedByDatabase reports whether a batch failed because PostgreSQL
// answered a statement with an error, as opposed to being unreachable: the
// transaction then did not commit (a COMMIT the server refused did not
// happen either), and the deliveries may fare better alone.
func refusedByDatabase(err error) bool {
	var (
		pgErr  *pgconn.PgError
		stored *storedThenFailedError
	)
	if errors.As(err, &stored) {
		return false
	}
	return errors.As(err, &pgErr) || errors.Is(err, errRowVanished)
}

// close stops taking deliveries and waits for the batches in flight.
// b.in is never closed: a request still arriving after a shutdown that
// timed out gets errShuttingDown (a 503), not a send on a closed channel.
func (b *batcher) close() {
	close(b.quit)
	b.done.Wait()
}

var errShuttingDown = errors.New("ingest is shutting down")
