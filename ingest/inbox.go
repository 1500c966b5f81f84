package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/verify"
)

// ErrNotReadCommitted means RecordTx or RecordManyTx was given a
// transaction that is not READ COMMITTED. Ingest looks a key up in the
// inbox's older key generations, and a snapshot taken before the
// transaction held the key generations' lock could miss a key stored as a
// generation opened (docs/operations.md, "Key generations"). Nothing was
// recorded; roll the transaction back.
var ErrNotReadCommitted = inbox.ErrNotReadCommitted

// ErrDeliveryConflict means the source already sent this delivery id with a
// different body. The stored row is left untouched.
var ErrDeliveryConflict = errors.New("delivery id already recorded with a different payload")

// JobInserter enqueues River jobs inside a caller's transaction.
// *river.Client[pgx.Tx] satisfies it; an insert-only client is enough.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Delivery is a verified webhook ready to be recorded.
type Delivery struct {
	Source     string
	DeliveryID string
	EventType  string
	OccurredAt time.Time // zero: unknown
	Headers    http.Header
	Payload    []byte
	// Origin says how the delivery reached us. Defaults to OriginWebhook.
	Origin string
	// Volatile are the top-level JSON fields the provider changes between
	// attempts (verify.Volatile): a body that differs from the stored one
	// only there is a duplicate, not a conflict.
	Volatile []string
	// DedupBody makes a body already stored for the source a duplicate,
	// whatever its delivery id: for senders that sign neither their id nor
	// a time (verify.Covered), whose captured requests anyone could post
	// again under a fresh id.
	DedupBody bool
	// DedupBodyByType makes DedupBody compare the event type too
	// (Source.DedupBodiesByType).
	DedupBodyByType bool
	// DedupContent is what body dedup compares, when the signature covers
	// something else than the body's bytes (verify.DedupContent: Twilio's
	// sorted parameters). nil: the payload.
	DedupContent []byte
}

// bodyKey is what the inbox's (source, body_key) constraint compares: the
// digest of the content, payloadSum (the payload's sha256, which the row
// stores anyway: the body is not hashed twice) unless DedupContent says
// otherwise, and with DedupBodyByType the event type. nil unless
// d.DedupBody. Without the type the key is the content's digest itself.
func (d Delivery) bodyKey(payloadSum [sha256.Size]byte) []byte {
	if !d.DedupBody {
		return nil
	}
	content := payloadSum
	if d.DedupContent != nil {
		content = sha256.Sum256(d.DedupContent)
	}
	if !d.DedupBodyByType {
		return content[:]
	}
	h := sha256.New()
	h.Write([]byte(d.EventType))
	h.Write([]byte{0})
	h.Write(content[:])
	return h.Sum(nil)
}

// Origins of a delivery.
const (
	OriginWebhook         = "webhook"           // a signed POST to /webhooks/{source}
	OriginStripeEventsAPI = "stripe_events_api" // recovered by listing Stripe's events
)

// Outcome says whether Record stored something new.
type Outcome string

const (
	OutcomeAccepted  Outcome = "accepted"
	OutcomeDuplicate Outcome = "duplicate"
)

// Recorded is the inbox row a delivery maps to.
type Recorded struct {
	ID      int64
	Outcome Outcome
	JobID   int64 // zero for a duplicate: its job was enqueued the first time
	// DuplicateOf is, for a duplicate found by its body (Delivery.DedupBody)
	// under another delivery id, the stored delivery's id.
	DuplicateOf string
}

// Inbox records deliveries and enqueues their processing jobs atomically.
type Inbox struct {
	pool *pgxpool.Pool
	jobs JobInserter

	// JobPerBatch enqueues one process_deliveries job for the deliveries
	// a batch accepts (RecordMany), instead of a process_delivery job
	// each: a worker then processes them in one transaction, and River's
	// per-job work is paid once (jobs.ProcessDeliveriesArgs). A batch that
	// accepts one delivery enqueues a process_delivery job. Set it before
	// the Inbox is used.
	JobPerBatch bool

	// Batchable, when set with JobPerBatch, says which deliveries a batch
	// job may hold (handlers.Registry.Batchable): the others get a job of
	// their own at once, not after their batch job found they do not
	// batch. nil: every delivery.
	Batchable func(source, eventType string) bool

	// HandOff, when set, is given the headers and payload of each
	// delivery a batch stores (RecordMany), for this process's processing
	// to take instead of reading them back. Set it where the same process
	// works the processing jobs; set it before the Inbox is used.
	HandOff *inbox.HandOff
}

func NewInbox(pool *pgxpool.Pool, jobs JobInserter) *Inbox {
	return &Inbox{pool: pool, jobs: jobs}
}

// Record stores d and enqueues its job in one transaction. A retried
// delivery (same source, delivery id and body) is a duplicate and changes
// nothing; the same id with another body is ErrDeliveryConflict.
func (in *Inbox) Record(ctx context.Context, d Delivery) (Recorded, error) {
	var rec Recorded
	r := d.row()
	err := pgx.BeginTxFunc(ctx, in.pool, readCommitted, func(tx pgx.Tx) error {
		var err error
		if rec, err = in.recordRow(ctx, tx, d, r); err == nil && rec.Outcome == OutcomeAccepted {
			in.HandOff.Put(rec.ID, r.Headers, r.Payload) // before the commit, as recordMany
		}
		return err
	})
	if err != nil && rec.Outcome == OutcomeAccepted {
		in.HandOff.Forget(rec.ID)
	}
	return rec, err
}

// RecordTx is Record inside the caller's transaction: the row and its job
// exist exactly when tx commits. tx must be READ COMMITTED
// (ErrNotReadCommitted otherwise). From the insert on, tx holds a lock
// that the job opening the inbox's next key generation waits for (once
// each longest retention): keep it short.
func (in *Inbox) RecordTx(ctx context.Context, tx pgx.Tx, d Delivery) (Recorded, error) {
	return in.recordRow(ctx, tx, d, d.row())
}

// recordRow is RecordTx for r, d as the inbox stores it.
func (in *Inbox) recordRow(ctx context.Context, tx pgx.Tx, d Delivery, r inbox.Row) (Recorded, error) {
	id, isNew, err := insertKeyAndRow(ctx, tx, r)
	switch {
	case err != nil:
		return Recorded{}, fmt.Errorf("insert inbox row: %w", err)
	case isNew:
		res, err := in.jobs.InsertTx(ctx, tx, jobs.ProcessDeliveryArgs{InboxID: id}, nil)
		if err != nil {
			return Recorded{}, fmt.Errorf("enqueue job for inbox row %d: %w", id, err)
		}
		return Recorded{ID: id, Outcome: OutcomeAccepted, JobID: res.Job.ID}, nil
	}

	// The insert did nothing, so a committed row holds this delivery id. In
	// READ COMMITTED this statement takes a new snapshot and sees it.
	s, byBody, err := inbox.Find(ctx, tx, r.Source, r.DeliveryID, r.BodyKey)
	if errors.Is(err, pgx.ErrNoRows) {
		// Deleted (retention) between the two statements: rare enough that
		// the provider's retry is the right answer.
		return Recorded{}, fmt.Errorf("inbox row for %s/%s vanished during insert", d.Source, d.DeliveryID)
	}
	if err != nil {
		return Recorded{}, fmt.Errorf("find inbox row: %w", err)
	}
	// A different body under one id is a conflict only between two copies
	// that came the same way: an event recovered through the provider's API
	// is the same event as its late webhook even when the bytes differ.
	// A row found by its body (byBody) matched on what the signature
	// covers, which is the same event even where the bytes differ (Twilio's
	// reordered parameters).
	if !byBody && !bytes.Equal(s.PayloadSHA256, r.PayloadSHA256) && s.Origin == r.Origin {
		same, err := sameStoredEvent(ctx, tx, s.ID, nil, d)
		if err != nil {
			return Recorded{}, err
		}
		if !same {
			return Recorded{ID: s.ID}, ErrDeliveryConflict
		}
	}
	rec := Recorded{ID: s.ID, Outcome: OutcomeDuplicate}
	if byBody {
		rec.DuplicateOf = s.DeliveryID
	}
	return rec, nil
}

// row is d as the inbox stores it: its payload's sha256 (hashed once, for
// the row and the body key), its headers without credentials, its origin
// defaulted.
func (d Delivery) row() inbox.Row {
	sum := sha256.Sum256(d.Payload)
	r := inbox.Row{
		Source: d.Source, DeliveryID: d.DeliveryID, EventType: d.EventType,
		Headers: storedHeaders(d.Headers), Payload: d.Payload, PayloadSHA256: sum[:],
		Origin: d.Origin, BodyKey: d.bodyKey(sum),
	}
	if r.Origin == "" {
		r.Origin = OriginWebhook
	}
	if !d.OccurredAt.IsZero() {
		t := d.OccurredAt
		r.OccurredAt = &t
	}
	return r
}

// sameStoredEvent reports whether d, whose body differs from the one
// stored as row id, is the same event all the same: it differs only in
// the provider's volatile fields (a retry restamped). stored is the stored
// body when the caller has it.
func sameStoredEvent(ctx context.Context, tx pgx.Tx, id int64, stored []byte, d Delivery) (bool, error) {
	if len(d.Volatile) == 0 {
		return false, nil
	}
	if stored == nil {
		var err error
		if stored, err = inbox.Payload(ctx, tx, id); err != nil {
			return false, fmt.Errorf("read stored body: %w", err)
		}
	}
	return verify.SameEvent(stored, d.Payload, d.Volatile), nil
}

// storedHeaders drops credentials that a proxy in front of us may have
// added, on every path into the inbox; the rest is kept for audit. A
// source's secret headers are dropped earlier, on receipt (Source.redact).
func storedHeaders(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "Proxy-Authorization", "Cookie":
			continue
		}
		out[k] = v
	}
	return out
}

// readCommitted is the isolation Record's own transactions ask for, so
// that a database whose default is another still records.
var readCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// insertKeyAndRow takes the key generations' fence and runs the insert, in
// one round trip: isNew false when the key was not new.
func insertKeyAndRow(ctx context.Context, tx pgx.Tx, r inbox.Row) (id int64, isNew bool, err error) {
	b := &pgx.Batch{}
	inbox.QueueRecord(b, r)
	res := tx.SendBatch(ctx, b)
	id, isNew, err = inbox.ReadRecord(res)
	if cerr := res.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return id, isNew, err
}
