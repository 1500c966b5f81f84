package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
	"github.com/hookinbox/hookinbox/internal/pgpipe"
	"github.com/hookinbox/hookinbox/jobs"
)

var (
	//go:embed sql/inbox_insert_many.sql
	inboxInsertManySQL string
	//go:embed sql/inbox_find_many.sql
	inboxFindManySQL string
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
	rb, err := newRecordBatch(ds)
	if err != nil {
		return nil, nil, err
	}
	b := &pgx.Batch{}
	rb.queue(b)
	return in.finishRecordMany(ctx, tx, rb, tx.SendBatch(ctx, b))
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
	rb, err := newRecordBatch(ds)
	if err != nil {
		return nil, nil, err
	}
	conn, err := in.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer pgpipe.Release(ctx, conn)
	b := &pgx.Batch{}
	b.BeginTx(readCommitted)
	rb.queue(b)
	res := conn.SendBatch(ctx, b)
	tx := newCommitCarryingTx(res.Tx())
	if _, err := res.Exec(); err != nil {
		res.Close() //nolint:errcheck // err is the answer
		return nil, nil, fmt.Errorf("begin: %w", err)
	}
	recs, errs, err := in.finishRecordMany(ctx, tx, rb, res)
	if err != nil {
		if tx.committed() {
			return nil, nil, &storedThenFailedError{err}
		}
		return nil, nil, err
	}
	if err := tx.commit(ctx); err != nil {
		return nil, nil, err
	}
	return recs, errs, nil
}

// recordBatch is a batch of deliveries as the inbox statements take them.
type recordBatch struct {
	ds                                    []Delivery
	sources, ids, types, headers, origins []string
	occurred                              []*time.Time
	payloads, sums, bodyKeys              [][]byte
}

func newRecordBatch(ds []Delivery) (*recordBatch, error) {
	n := len(ds)
	rb := &recordBatch{
		ds:      ds,
		sources: make([]string, n), ids: make([]string, n), types: make([]string, n), headers: make([]string, n), origins: make([]string, n),
		occurred: make([]*time.Time, n),
		payloads: make([][]byte, n), sums: make([][]byte, n), bodyKeys: make([][]byte, n),
	}
	for i, d := range ds {
		if d.Origin == "" {
			d.Origin = OriginWebhook
		}
		sum := sha256.Sum256(d.Payload)
		h, err := json.Marshal(storedHeaders(d.Headers))
		if err != nil {
			return nil, err
		}
		rb.sources[i], rb.ids[i], rb.types[i], rb.headers[i], rb.origins[i] = d.Source, d.DeliveryID, d.EventType, string(h), d.Origin
		rb.payloads[i], rb.sums[i], rb.bodyKeys[i] = d.Payload, sum[:], d.bodyKey(sum)
		if !d.OccurredAt.IsZero() {
			t := d.OccurredAt
			rb.occurred[i] = &t
		}
	}
	return rb, nil
}

// queue adds the key generations' fence, the insert and the read of what
// is stored to b, so they travel in one round trip. The read is a
// statement of its own, so in READ COMMITTED it takes a new snapshot
// after the insert: it sees a row that a concurrent transaction committed
// while the insert waited on it (the insert then did nothing). It reads
// every key, as which ones the insert will skip is not known yet; a key's
// own new row is ignored.
func (rb *recordBatch) queue(b *pgx.Batch) {
	b.Queue(keyFenceSQL)
	b.Queue(inboxInsertManySQL, pgnamed.Args{
		"sources": rb.sources, "delivery_ids": rb.ids, "event_types": rb.types, "occurred_ats": rb.occurred,
		"headers": rb.headers, "payloads": rb.payloads, "payload_sha256s": rb.sums, "origins": rb.origins,
		"body_keys": rb.bodyKeys,
	})
	b.Queue(inboxFindManySQL, pgnamed.Args{"sources": rb.sources, "delivery_ids": rb.ids, "body_keys": rb.bodyKeys})
}

// finishRecordMany reads what rb's statements found in res, decides each
// delivery and enqueues the accepted ones' jobs in tx.
func (in *Inbox) finishRecordMany(ctx context.Context, tx pgx.Tx, rb *recordBatch, res pgx.BatchResults) ([]Recorded, []error, error) {
	inserted, existing, err := readInsertAndFind(res)
	if cerr := res.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("insert inbox rows: %w", cerr)
	}
	if err != nil {
		return nil, nil, err
	}
	ds, sources, ids, sums, origins := rb.ds, rb.sources, rb.ids, rb.sums, rb.origins
	n := len(ds)

	recs, errs := make([]Recorded, n), make([]error, n)
	var params []river.InsertManyParams
	var accepted []int
	for i := range ds {
		k := inboxKey{sources[i], ids[i]}
		if id, ok := inserted[k]; ok {
			delete(inserted, k) // later copies in the batch are duplicates
			existing[k] = storedRow{id: id, sum: sums[i], origin: origins[i], payload: ds[i].Payload, deliveryID: k.id}
			recs[i] = Recorded{ID: id, Outcome: OutcomeAccepted}
			params = append(params, river.InsertManyParams{Args: jobs.ProcessDeliveryArgs{InboxID: id}})
			accepted = append(accepted, i)
			continue
		}
		s, ok := existing[k]
		if !ok {
			return nil, nil, fmt.Errorf("inbox row for %s/%s: %w", k.source, k.id, errRowVanished)
		}
		byBody := s.deliveryID != k.id // found by its body (Delivery.DedupBody): the same event
		if !byBody && !bytes.Equal(s.sum, sums[i]) && s.origin == origins[i] {
			same, err := sameStoredEvent(ctx, tx, s.id, s.payload, ds[i])
			if err != nil {
				return nil, nil, err
			}
			if !same {
				recs[i], errs[i] = Recorded{ID: s.id}, ErrDeliveryConflict
				continue
			}
		}
		recs[i] = Recorded{ID: s.id, Outcome: OutcomeDuplicate}
		if byBody {
			recs[i].DuplicateOf = s.deliveryID
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

// inboxKey names a delivery in the inbox.
type inboxKey struct{ source, id string }

// storedRow is what a batch needs of a delivery's stored row.
type storedRow struct {
	id         int64
	sum        []byte
	origin     string
	payload    []byte // a copy earlier in this batch; nil: read it when needed
	deliveryID string // the stored row's: another than the key's when found by body
}

// readInsertAndFind reads the batch's insert (the rows it created) and
// find (every key's stored row, the new ones included).
func readInsertAndFind(res pgx.BatchResults) (map[inboxKey]int64, map[inboxKey]storedRow, error) {
	if err := readFence(res); err != nil {
		return nil, nil, err
	}
	rows, err := res.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("insert inbox rows: %w", err)
	}
	inserted := map[inboxKey]int64{}
	var (
		id int64
		k  inboxKey
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &k.source, &k.id}, func() error {
		inserted[k] = id
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("insert inbox rows: %w", err)
	}
	rows, err = res.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("find inbox rows: %w", err)
	}
	existing := map[inboxKey]storedRow{}
	var s storedRow
	if _, err := pgx.ForEachRow(rows, []any{&s.id, &k.source, &k.id, &s.sum, &s.origin, &s.deliveryID}, func() error {
		if _, ok := inserted[k]; !ok {
			existing[k] = s
		}
		s.sum = nil // a fresh slice for the next row
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("find inbox rows: %w", err)
	}
	return inserted, existing, nil
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
