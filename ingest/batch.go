package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
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
// Record would give it alone, in two statements and one job insert: the
// batched form of RecordTx. A delivery id repeated within ds is decided
// in order, the first occurrence as if it came first.
func (in *Inbox) RecordManyTx(ctx context.Context, tx pgx.Tx, ds []Delivery) ([]Recorded, []error, error) {
	n := len(ds)
	var (
		sources, ids, types, headers, origins = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		occurred                              = make([]*time.Time, n)
		payloads, sums                        = make([][]byte, n), make([][]byte, n)
	)
	for i, d := range ds {
		if d.Origin == "" {
			d.Origin = OriginWebhook
		}
		sum := sha256.Sum256(d.Payload)
		h, err := json.Marshal(storedHeaders(d.Headers))
		if err != nil {
			return nil, nil, err
		}
		sources[i], ids[i], types[i], headers[i], origins[i] = d.Source, d.DeliveryID, d.EventType, string(h), d.Origin
		payloads[i], sums[i] = d.Payload, sum[:]
		if !d.OccurredAt.IsZero() {
			t := d.OccurredAt
			occurred[i] = &t
		}
	}
	rows, err := tx.Query(ctx, inboxInsertManySQL, pgnamed.Args{
		"sources": sources, "delivery_ids": ids, "event_types": types, "occurred_ats": occurred,
		"headers": headers, "payloads": payloads, "payload_sha256s": sums, "origins": origins,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("insert inbox rows: %w", err)
	}
	type key struct{ source, id string }
	inserted := map[key]int64{}
	for rows.Next() {
		var (
			id int64
			k  key
		)
		if err := rows.Scan(&id, &k.source, &k.id); err != nil {
			rows.Close()
			return nil, nil, err
		}
		inserted[k] = id
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("insert inbox rows: %w", err)
	}

	// Everything not inserted now was committed before (or earlier in this
	// batch): read what is stored, in one statement.
	type stored struct {
		id      int64
		sum     []byte
		origin  string
		payload []byte // a copy earlier in this batch; nil: read it when needed
	}
	existing := map[key]stored{}
	if len(inserted) < n {
		var findSources, findIDs []string
		for i := range ds {
			if _, ok := inserted[key{sources[i], ids[i]}]; !ok {
				findSources, findIDs = append(findSources, sources[i]), append(findIDs, ids[i])
			}
		}
		rows, err := tx.Query(ctx, inboxFindManySQL, pgnamed.Args{"sources": findSources, "delivery_ids": findIDs})
		if err != nil {
			return nil, nil, fmt.Errorf("find inbox rows: %w", err)
		}
		for rows.Next() {
			var (
				s stored
				k key
			)
			if err := rows.Scan(&s.id, &k.source, &k.id, &s.sum, &s.origin); err != nil {
				rows.Close()
				return nil, nil, err
			}
			existing[k] = s
		}
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("find inbox rows: %w", err)
		}
	}

	recs, errs := make([]Recorded, n), make([]error, n)
	var params []river.InsertManyParams
	var accepted []int
	for i := range ds {
		k := key{sources[i], ids[i]}
		if id, ok := inserted[k]; ok {
			delete(inserted, k) // later copies in the batch are duplicates
			existing[k] = stored{id: id, sum: sums[i], origin: origins[i], payload: ds[i].Payload}
			recs[i] = Recorded{ID: id, Outcome: OutcomeAccepted}
			params = append(params, river.InsertManyParams{Args: jobs.ProcessDeliveryArgs{InboxID: id}})
			accepted = append(accepted, i)
			continue
		}
		s, ok := existing[k]
		if !ok {
			return nil, nil, fmt.Errorf("inbox row for %s/%s: %w", k.source, k.id, errRowVanished)
		}
		if !bytes.Equal(s.sum, sums[i]) && s.origin == origins[i] {
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
	}
	if len(params) > 0 {
		res, err := in.jobs.InsertManyTx(ctx, tx, params)
		if err != nil {
			return nil, nil, fmt.Errorf("enqueue jobs: %w", err)
		}
		for j, i := range accepted {
			recs[i].JobID = res[j].Job.ID
		}
	}
	return recs, errs, nil
}
