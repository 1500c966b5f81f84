package inbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/key_fence.sql
	keyFenceSQL string
	//go:embed sql/inbox_insert.sql
	insertSQL string
	//go:embed sql/inbox_insert_many.sql
	insertManySQL string
	//go:embed sql/inbox_find.sql
	findSQL string
	//go:embed sql/inbox_find_many.sql
	findManySQL string
	//go:embed sql/inbox_payload.sql
	payloadSQL string
)

// ErrNotReadCommitted means a record ran in a transaction that is not
// READ COMMITTED. The insert looks a key up in the older key generations,
// and a snapshot taken before the transaction held the generations' fence
// could miss a key stored as a generation opened (the package comment,
// "What is a duplicate"). Nothing was recorded.
var ErrNotReadCommitted = errors.New("inbox: recording needs a READ COMMITTED transaction")

// Row is a delivery as the inbox stores it.
type Row struct {
	Source, DeliveryID, EventType string
	OccurredAt                    *time.Time // nil: unknown
	Headers                       http.Header
	Payload                       []byte
	PayloadSHA256                 []byte // the payload's sha256
	Origin                        string
	// BodyKey is what the (source, body_key) constraint compares, for a
	// source that dedupes bodies; nil for the others.
	BodyKey []byte
}

// Key names a delivery: its source and the source's delivery id.
type Key struct{ Source, DeliveryID string }

// Stored is what the key of a delivery the inbox holds says of it: enough
// to tell a duplicate from a conflict without reading the inbox.
type Stored struct {
	ID            int64
	PayloadSHA256 []byte
	Origin        string
	// DeliveryID is the stored delivery's: another than the key's when it
	// was found by its body (Row.BodyKey).
	DeliveryID string
}

// QueueRecord queues in b the statements that record r: the key
// generations' fence (key_fence.sql), a statement of its own so that in
// READ COMMITTED the insert's snapshot is taken once the fence is held,
// and the insert (inbox_insert.sql), which stores r, its key and its
// pending row only when the key is new. The transaction they run in must
// be READ COMMITTED, and holds the fence until it ends: keep it short.
func QueueRecord(b *pgx.Batch, r Row) {
	b.Queue(keyFenceSQL)
	b.Queue(insertSQL, pgnamed.Args{
		"origin":         r.Origin,
		"source":         r.Source,
		"delivery_id":    r.DeliveryID,
		"event_type":     r.EventType,
		"occurred_at":    r.OccurredAt,
		"headers":        r.Headers,
		"payload":        r.Payload,
		"payload_sha256": r.PayloadSHA256,
		"body_key":       r.BodyKey,
	})
}

// ReadRecord reads what QueueRecord's statements did: the id r was stored
// under, or isNew false when its key was stored already (a duplicate or a
// conflict: Find reads the delivery it repeats). ErrNotReadCommitted in a
// transaction of another isolation level.
func ReadRecord(res pgx.BatchResults) (id int64, isNew bool, err error) {
	if err := readFence(res); err != nil {
		return 0, false, err
	}
	err = res.QueryRow().Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// QueueRecordMany queues in b the statements that record rows, each
// decided as QueueRecord decides one: the key generations' fence, the
// insert (inbox_insert_many.sql) and the read of every key's stored
// delivery (inbox_find_many.sql). The read is a statement of its own, so
// in READ COMMITTED it takes a new snapshot after the insert and sees a
// row a concurrent transaction committed while the insert waited on it
// (the insert then did nothing). It reads every key, as which ones the
// insert will skip is not known yet. A key repeated within rows is
// decided in order: the first copy is the one stored.
func QueueRecordMany(b *pgx.Batch, rows []Row) error {
	n := len(rows)
	sources, ids, types, headers, origins := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	occurred := make([]*time.Time, n)
	payloads, sums, bodyKeys := make([][]byte, n), make([][]byte, n), make([][]byte, n)
	for i, r := range rows {
		h, err := json.Marshal(r.Headers)
		if err != nil {
			return err
		}
		sources[i], ids[i], types[i], headers[i], origins[i] = r.Source, r.DeliveryID, r.EventType, string(h), r.Origin
		occurred[i], payloads[i], sums[i], bodyKeys[i] = r.OccurredAt, r.Payload, r.PayloadSHA256, r.BodyKey
	}
	b.Queue(keyFenceSQL)
	b.Queue(insertManySQL, pgnamed.Args{
		"sources": sources, "delivery_ids": ids, "event_types": types, "occurred_ats": occurred,
		"headers": headers, "payloads": payloads, "payload_sha256s": sums, "origins": origins,
		"body_keys": bodyKeys,
	})
	b.Queue(findManySQL, pgnamed.Args{"sources": sources, "delivery_ids": ids, "body_keys": bodyKeys})
	return nil
}

// ReadRecordMany reads what QueueRecordMany's statements did: inserted,
// the keys stored now, with their ids; stored, every other key's stored
// delivery (committed before, or by a concurrent transaction while the
// insert waited). A key in neither was deleted between the two
// statements (retention). ErrNotReadCommitted in a transaction of another
// isolation level.
func ReadRecordMany(res pgx.BatchResults) (inserted map[Key]int64, stored map[Key]Stored, err error) {
	if err := readFence(res); err != nil {
		return nil, nil, err
	}
	rows, err := res.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("insert inbox rows: %w", err)
	}
	inserted = map[Key]int64{}
	var (
		id int64
		k  Key
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &k.Source, &k.DeliveryID}, func() error {
		inserted[k] = id
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("insert inbox rows: %w", err)
	}
	rows, err = res.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("find inbox rows: %w", err)
	}
	stored = map[Key]Stored{}
	var s Stored
	if _, err := pgx.ForEachRow(rows, []any{&s.ID, &k.Source, &k.DeliveryID, &s.PayloadSHA256, &s.Origin, &s.DeliveryID}, func() error {
		if _, ok := inserted[k]; !ok { // a key's own new row is not what it repeats
			stored[k] = s
		}
		s.PayloadSHA256 = nil // a fresh slice for the next row
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("find inbox rows: %w", err)
	}
	return inserted, stored, nil
}

// readFence reads the key generations' fence's result: ErrNotReadCommitted
// in a transaction of another isolation level.
func readFence(res pgx.BatchResults) error {
	var isolation string
	if err := res.QueryRow().Scan(&isolation); err != nil {
		return fmt.Errorf("take the key generations' fence: %w", err)
	}
	if isolation != "read committed" {
		return fmt.Errorf("%w, not %s", ErrNotReadCommitted, isolation)
	}
	return nil
}

// Find reads the stored delivery a record whose key was not new repeats
// (inbox_find.sql): the one under the key (source, deliveryID), else,
// where the source dedupes bodies (bodyKey not nil), the one its body
// came in first (byBody). Run in the recording transaction after the
// insert: in READ COMMITTED it takes a new snapshot, and sees the
// delivery whose commit the insert waited for. pgx.ErrNoRows when there
// is none: deleted by retention since.
func Find(ctx context.Context, q Querier, source, deliveryID string, bodyKey []byte) (s Stored, byBody bool, err error) {
	err = q.QueryRow(ctx, findSQL, pgnamed.Args{"source": source, "delivery_id": deliveryID, "body_key": bodyKey}).
		Scan(&s.ID, &s.PayloadSHA256, &s.Origin, &s.DeliveryID, &byBody)
	return s, byBody, err
}

// Payload reads a stored delivery's body (inbox_payload.sql), to tell a
// retry whose volatile fields changed from a conflict; pgx.ErrNoRows
// when there is none.
func Payload(ctx context.Context, q Querier, id int64) ([]byte, error) {
	var payload []byte
	err := q.QueryRow(ctx, payloadSQL, pgnamed.Args{"id": id}).Scan(&payload)
	return payload, err
}
