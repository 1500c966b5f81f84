package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
	"github.com/hookinbox/hookinbox/internal/pgpipe"
)

// processAll is ProcessBatch before its flush.
func (b *txBatch) processAll(ctx context.Context, jobs JobInserter, ds []Delivery) ([]Result, []error, error) {
	results, errs := make([]Result, len(ds)), make([]error, len(ds))
	locked, err := b.lockAll(ctx, ds, results, errs)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range locked {
		res, err := b.processLocked(ctx, jobs, p)
		var carried *pgpipe.CarriedError
		if errors.As(err, &carried) {
			return nil, nil, err
		}
		results[p.i], errs[p.i] = res, err
	}
	return results, errs, nil
}

// lockedDelivery is a delivery of processAll whose resource the batch holds.
type lockedDelivery struct {
	i       int // in ds
	d       Delivery
	matched []Registration
	res     Resource
	stale   bool
}

// lockAll decides what each delivery needs: nothing (no handler matches:
// skipped), to go alone, or its lock and version. It takes the locks and
// reads the versions of all of them in two statements, sent in one round
// trip with whatever is carried: two statements for the batch instead of
// two for each delivery.
func (b *txBatch) lockAll(ctx context.Context, ds []Delivery, results []Result, errs []error) ([]*lockedDelivery, error) {
	var (
		want                         []*lockedDelivery
		lockKeys, sources, resources []string
		seen                         = make(map[string]bool, len(ds))
	)
	for i, d := range ds {
		if d.Provider == "" {
			d.Provider = b.r.Provider(d.Source)
		}
		matched := b.r.matching(d)
		if len(matched) == 0 {
			results[i] = Result{Outcome: OutcomeSkipped}
			continue
		}
		if wantGitHubEvent(matched) {
			d.parseGitHub()
		}
		res := resourceOf(&d, b.r.sources[d.Source].ResourceField)
		key := lockKey(d, res)
		if seen[key] {
			errs[i] = ErrResourceBusy
			continue
		}
		seen[key] = true
		lockKeys = append(lockKeys, key)
		if res.Key != "" {
			sources, resources = append(sources, d.Source), append(resources, res.Key)
		}
		want = append(want, &lockedDelivery{i: i, d: d, matched: matched, res: res})
	}
	if len(want) == 0 {
		return nil, nil // what is carried waits for the next round trip
	}
	batch := &pgx.Batch{}
	batch.Queue(resourceTryLockManySQL, pgnamed.Args{"lock_keys": lockKeys})
	if len(resources) > 0 {
		batch.Queue(resourceVersionGetManySQL, pgnamed.Args{"sources": sources, "resource_keys": resources})
	}
	out, err := b.carry.Send(ctx, batch)
	if err != nil {
		return nil, err
	}
	locked, err := readLockAll(out, want, errs)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return locked, err
}

// readLockAll reads lockAll's results: the wanted deliveries' locks, then
// the versions of those with a resource.
func readLockAll(out pgx.BatchResults, want []*lockedDelivery, errs []error) ([]*lockedDelivery, error) {
	got, err := readLocks(out, len(want))
	if err != nil {
		return nil, err
	}
	// The n-th resource in the version read's arguments is the n-th
	// wanted delivery that has one; without any, lockAll sent no read.
	var withKey []*lockedDelivery
	for _, p := range want {
		if p.res.Key != "" {
			withKey = append(withKey, p)
		}
	}
	if len(withKey) > 0 {
		if err := readVersions(out, withKey); err != nil {
			return nil, err
		}
	}
	var locked []*lockedDelivery
	for k, p := range want {
		if !got[k] {
			errs[p.i] = ErrResourceBusy
			continue
		}
		locked = append(locked, p)
	}
	return locked, nil
}

func readLocks(out pgx.BatchResults, n int) ([]bool, error) {
	rows, err := out.Query()
	if err != nil {
		return nil, fmt.Errorf("lock resources: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[bool])
	if err != nil {
		return nil, fmt.Errorf("lock resources: %w", err)
	}
	if len(got) != n {
		return nil, fmt.Errorf("lock resources: %d answers for %d keys", len(got), n)
	}
	return got, nil
}

// readVersions sets stale on each of withKey whose resource has a newer
// version than its delivery.
func readVersions(out pgx.BatchResults, withKey []*lockedDelivery) error {
	rows, err := out.Query()
	if err != nil {
		return fmt.Errorf("read resource versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			n int
			v Version
		)
		if err := rows.Scan(&n, &v.At, &v.ReceivedAt, &v.ReceiptAt); err != nil {
			return fmt.Errorf("read resource versions: %w", err)
		}
		if n < 1 || n > len(withKey) {
			return fmt.Errorf("read resource versions: row %d of %d", n, len(withKey))
		}
		p := withKey[n-1]
		p.stale = p.res.OlderThan(v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read resource versions: %w", err)
	}
	return nil
}

// processLocked runs p's handlers under a savepoint that opens with the
// next round trip: the carry, which a statement a handler runs on its Tx
// sends first. Its closing statements join the carry, its resource's
// version the batch's (flush). A handler that fails, or succeeds, before
// anything of its delivery was sent needs no savepoint: it is dropped.
func (b *txBatch) processLocked(ctx context.Context, jobs JobInserter, p *lockedDelivery) (Result, error) {
	start := b.carry.Len()
	b.carry.Queue("SAVEPOINT " + deliverySavepoint)
	htx := newCarryingTx(b)
	deferred, err := b.r.runHandlers(ctx, htx, jobs, p.d, p.res, p.stale, false, p.matched)
	if htx.carryErr != nil {
		// Whatever the handler made of it: an earlier delivery's closing
		// statements failed, and rolling back to "the" savepoint could
		// undo that delivery's work instead of this one's.
		return Result{}, htx.carryErr
	}
	if err == nil {
		if !htx.sent {
			// Nothing of the delivery ran yet: its closing statements are
			// all it sends, and if one fails the batch fails (a carried
			// error), so there is nothing a savepoint could roll back
			// alone. Two statements fewer a delivery for handlers that
			// only Defer.
			b.carry.Drop(start)
		}
		b.carry.Carry(deferred.stmts...)
		b.rows.add(deferred.rows)
		if htx.sent {
			b.carry.Queue("RELEASE SAVEPOINT " + deliverySavepoint)
		}
		b.versions.add(p.d, p.res)
		return Result{Outcome: OutcomeProcessed, Resource: p.res, Stale: p.stale}, nil
	}
	var carried *pgpipe.CarriedError
	if errors.As(err, &carried) {
		return Result{}, carried
	}
	if !htx.sent {
		b.carry.Drop(start)
		return Result{}, err
	}
	// The handler's statements flushed the carry: nothing is queued that
	// the rollback could overtake.
	if rerr := rollback(ctx, b.tx); rerr != nil {
		return Result{}, errors.Join(err, fmt.Errorf("roll back the delivery's savepoint: %w", rerr))
	}
	return Result{}, err
}

// carryingTx is a batched delivery's Tx in processAll: before a statement
// of the handler's own it sends what the batch carries (the delivery's
// savepoint among it) in a round trip of its own, so the statement runs
// inside the savepoint. The handler's statement does not join that round
// trip: pgx sends an Exec without arguments by the simple protocol, which
// takes several statements in one string, and a pipeline would refuse
// them.
type carryingTx struct {
	pgpipe.Tx
	b        *txBatch
	sent     bool  // the delivery's savepoint went out
	carryErr error // what sending the carry failed with: the batch's failure
}

func newCarryingTx(b *txBatch) *carryingTx {
	t := &carryingTx{b: b}
	t.Tx = pgpipe.Tx{Tx: batchTx{b.tx}, Before: t.flush}
	return t
}

func (t *carryingTx) flush(ctx context.Context, _ string) error {
	t.sent = true
	if err := t.b.carry.Flush(ctx); err != nil {
		t.carryErr = err
		return err
	}
	return nil
}
