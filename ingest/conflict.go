package ingest

import (
	"context"
	"crypto/sha256"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// MaxConflictBody bounds the body a conflict record keeps (bytes): enough
// to compare two events, while a sender that keeps conflicting (it needs a
// valid signature to get this far) cannot fill the disk faster than
// retention empties it.
const MaxConflictBody = 64 << 10

// RecordConflict records d, which Record refused with ErrDeliveryConflict
// (storedID is the inbox row it conflicts with), in delivery_conflict:
// the one thing a refused webhook writes, and never into the inbox.
func (in *Inbox) RecordConflict(ctx context.Context, d Delivery, storedID int64) error {
	sum := sha256.Sum256(d.Payload)
	body := d.Payload
	if len(body) > MaxConflictBody {
		body = body[:MaxConflictBody]
	}
	var inboxID *int64
	if storedID != 0 {
		inboxID = &storedID
	}
	return inbox.RecordConflict(ctx, in.pool, inbox.Conflict{
		Source: d.Source, DeliveryID: d.DeliveryID, InboxID: inboxID, PayloadSHA256: sum[:],
		Headers: storedHeaders(d.Headers), Body: body, BodySize: len(d.Payload),
	})
}
