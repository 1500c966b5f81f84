package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/pgpipe"
	"github.com/hookinbox/hookinbox/jobs"
)

// errRowVanished: a delivery was neither inserted nor found, as when a
// conflicting row was deleted between the two statements.
var errRowVanished = errors.New("vanished during insert")

// RecordManyTx records deliveries as Record does, each with the outcome
// Record would give it alone, in one round trip of three statements (the
// key generations' fence, the insert, the read) and one job insert: the
// batched form of RecordTx, and READ COMMITTED as it. A delivery id
// repeated within ds is decided in order, the first occurrence as if it
// came first.
func (in *Inbox) RecordManyTx(ctx context.Context, tx pgx.Tx, ds []Delivery) ([]Recorded, []error, error) {
	rows := rowsOf(ds)
	b := &pgx.Batch{}
	if err := inbox.QueueRecordMany(b, rows); err != nil {
		return nil, nil, err
	}
	return in.finishRecordMany(ctx, tx, ds, rows, tx.SendBatch(ctx, b))
}

// recordMany is RecordManyTx in a transaction of its own, committed, in two
// round trips: its BEGIN travels with the insert (pgx's Batch.BeginTx) and
// its COMMIT with River's job insert (commitCarryingTx). Under steady load
// every round trip waits a scheduler turn on both sides, and a bare BEGIN
// was a large share of a batch's time in the steady benchmark
// (bench/README.md, Design decisions, "Ingest round trips"). How long a batch takes bounds
// how many requests a provider's connections get answered.
//
// The connection is held here, not by a pgxpool.Tx: after a carried
// COMMIT the pgx.Tx still counts itself open, and closing it would cost
// the round trip saved. pgpipe.Release rolls back only a transaction the
// server still has open.
func (in *Inbox) recordMany(ctx context.Context, ds []Delivery) ([]Recorded, []error, error) {
	rows := rowsOf(ds)
	b := &pgx.Batch{}
	b.BeginTx(readCommitted)
	if err := inbox.QueueRecordMany(b, rows); err != nil {
		return nil, nil, err
	}
	conn, err := in.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer pgpipe.Release(ctx, conn)
	res := conn.SendBatch(ctx, b)
	tx := newCommitCarryingTx(res.Tx())
	if _, err := res.Exec(); err != nil {
		res.Close() //nolint:errcheck // err is the answer
		return nil, nil, fmt.Errorf("begin: %w", err)
	}
	recs, errs, err := in.finishRecordMany(ctx, tx, ds, rows, res)
	if err != nil {
		if tx.committed() {
			return nil, nil, &storedThenFailedError{err}
		}
		in.HandOff.Forget(tx.handedOn...)
		return nil, nil, err
	}
	if err := tx.commit(ctx); err != nil {
		in.HandOff.Forget(tx.handedOn...)
		return nil, nil, err
	}
	return recs, errs, nil
}

// handOn gives HandOff the stored headers and payloads of the deliveries
// the batch accepted, before the statement that carries the COMMIT: a
// job is fetched as soon as it commits. The caller forgets them if the
// batch does not commit.
func (in *Inbox) handOn(tx *commitCarryingTx, rows []inbox.Row, recs []Recorded) {
	if in.HandOff == nil {
		return
	}
	for i, rec := range recs {
		if rec.Outcome == OutcomeAccepted {
			in.HandOff.Put(rec.ID, rows[i].Headers, rows[i].Payload)
			tx.handedOn = append(tx.handedOn, rec.ID)
		}
	}
}

// rowsOf is ds as the inbox stores them.
func rowsOf(ds []Delivery) []inbox.Row {
	rows := make([]inbox.Row, len(ds))
	for i, d := range ds {
		rows[i] = d.row()
	}
	return rows
}

// finishRecordMany reads what the inbox's statements for rows (ds as
// stored) found in res, decides each delivery and enqueues the accepted
// ones' jobs in tx.
func (in *Inbox) finishRecordMany(ctx context.Context, tx pgx.Tx, ds []Delivery, rows []inbox.Row, res pgx.BatchResults) ([]Recorded, []error, error) {
	inserted, existing, err := inbox.ReadRecordMany(res)
	if cerr := res.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("insert inbox rows: %w", cerr)
	}
	if err != nil {
		return nil, nil, err
	}
	n := len(ds)

	recs, errs := make([]Recorded, n), make([]error, n)
	var params []river.InsertManyParams
	var accepted []int
	var copies map[inbox.Key][]byte // the bodies of keys stored by this batch, for its later copies
	for i, r := range rows {
		k := inbox.Key{Source: r.Source, DeliveryID: r.DeliveryID}
		if id, ok := inserted[k]; ok {
			delete(inserted, k) // later copies in the batch are duplicates
			existing[k] = inbox.Stored{ID: id, PayloadSHA256: r.PayloadSHA256, Origin: r.Origin, DeliveryID: k.DeliveryID}
			if copies == nil {
				copies = map[inbox.Key][]byte{}
			}
			copies[k] = ds[i].Payload
			recs[i] = Recorded{ID: id, Outcome: OutcomeAccepted}
			params = append(params, river.InsertManyParams{Args: jobs.ProcessDeliveryArgs{InboxID: id}})
			accepted = append(accepted, i)
			continue
		}
		s, ok := existing[k]
		if !ok {
			return nil, nil, fmt.Errorf("inbox row for %s/%s: %w", k.Source, k.DeliveryID, errRowVanished)
		}
		byBody := s.DeliveryID != k.DeliveryID // found by its body (Delivery.DedupBody): the same event
		if !byBody && !bytes.Equal(s.PayloadSHA256, r.PayloadSHA256) && s.Origin == r.Origin {
			same, err := sameStoredEvent(ctx, tx, s.ID, copies[k], ds[i])
			if err != nil {
				return nil, nil, err
			}
			if !same {
				recs[i], errs[i] = Recorded{ID: s.ID}, ErrDeliveryConflict
				continue
			}
		}
		recs[i] = Recorded{ID: s.ID, Outcome: OutcomeDuplicate}
		if byBody {
			recs[i].DuplicateOf = s.DeliveryID
		}
	}
	jobOf := make([]int, len(accepted)) // accepted delivery → its job in params
	for j := range jobOf {
		jobOf[j] = j
	}
	if in.JobPerBatch {
		params = in.batchJob(ds, recs, accepted, params, jobOf)
	}
	if len(params) > 0 {
		if carrier, ok := tx.(*commitCarryingTx); ok {
			carrier.jobs = len(params) // so that only their full insert carries the COMMIT
			in.handOn(carrier, rows, recs)
		}
		res, err := in.jobs.InsertManyTx(ctx, tx, params)
		if err != nil {
			return nil, nil, fmt.Errorf("enqueue jobs: %w", err)
		}
		for j, i := range accepted {
			recs[i].JobID = res[jobOf[j]].Job.ID
		}
	}
	return recs, errs, nil
}

// batchJob folds the jobs of the accepted deliveries a batch job may hold
// (Inbox.Batchable) into one process_deliveries job, when there are two
// or more; the others keep their own. params has one job per accepted
// delivery, in order; batchJob returns the jobs to insert and points
// jobOf at each delivery's.
func (in *Inbox) batchJob(ds []Delivery, recs []Recorded, accepted []int, params []river.InsertManyParams, jobOf []int) []river.InsertManyParams {
	batched := make([]bool, len(accepted))
	var ids []int64
	for j, i := range accepted {
		if in.Batchable == nil || in.Batchable(ds[i].Source, ds[i].EventType) {
			batched[j] = true
			ids = append(ids, recs[i].ID)
		}
	}
	if len(ids) < 2 {
		return params
	}
	slices.Sort(ids)
	out := []river.InsertManyParams{{Args: jobs.ProcessDeliveriesArgs{InboxIDs: ids}}}
	for j := range accepted {
		if batched[j] {
			jobOf[j] = 0
			continue
		}
		jobOf[j] = len(out)
		out = append(out, params[j])
	}
	return out
}
