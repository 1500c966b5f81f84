package handlers

import (
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/resource_version_upsert.sql
	resourceVersionUpsertSQL string
	//go:embed sql/resource_version_upsert_receipt.sql
	resourceVersionUpsertReceiptSQL string
)

// batchVersions are the new resource versions of a ProcessBatch's processed
// deliveries, recorded at its flush in one statement for each clock instead
// of one a delivery. With the savepoint a Defer-only delivery no longer
// opens, such a delivery (the shipped mirror's) sends one statement instead
// of four. The steady benchmark measured PostgreSQL's CPU per delivery within
// its run-to-run spread of the build without it (bench/README.md, Design
// decisions, "Processing batches"): a statement's own cost is small beside
// the rows and index entries it writes. A batch never holds two deliveries of
// one resource, so each row is written once, as the delivery's own statement
// would have. A delivery processed alone sends the same statements with one
// row (endQueries).
type batchVersions struct {
	provider, receipt versionColumns
}

// versionColumns are one clock's upserts, column by column.
type versionColumns struct {
	sources, keys, deliveryIDs []string
	ats, receivedAts           []time.Time
}

// add records r's version as d leaves it; nothing if r has no key.
func (v *batchVersions) add(d Delivery, r Resource) {
	if r.Key == "" {
		return
	}
	c := &v.provider
	if r.AtIsReceipt {
		c = &v.receipt
	}
	c.sources, c.keys, c.deliveryIDs = append(c.sources, d.Source), append(c.keys, r.Key), append(c.deliveryIDs, d.DeliveryID)
	c.ats, c.receivedAts = append(c.ats, r.At), append(c.receivedAts, r.ReceivedAt)
}

// queue adds the statements that record the versions to batch, and forgets
// them.
func (v *batchVersions) queue(batch *pgx.Batch) {
	if p := v.provider; len(p.keys) > 0 {
		batch.Queue(resourceVersionUpsertSQL, pgnamed.Args{
			"sources": p.sources, "resource_keys": p.keys, "applied_ats": p.ats,
			"received_ats": p.receivedAts, "delivery_ids": p.deliveryIDs,
		})
	}
	if r := v.receipt; len(r.keys) > 0 {
		batch.Queue(resourceVersionUpsertReceiptSQL, pgnamed.Args{
			"sources": r.sources, "resource_keys": r.keys, "received_ats": r.receivedAts, "delivery_ids": r.deliveryIDs,
		})
	}
	*v = batchVersions{}
}
