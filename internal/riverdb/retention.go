package riverdb

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Retention's statements that keep what River's jobs still need: each
// reads river_job in the statement that deletes or counts, so a job that
// finishes meanwhile is judged once, under one snapshot.
var (
	//go:embed sql/retention_inbox.sql
	retentionInboxSQL string
	//go:embed sql/retention_inbox_held.sql
	retentionInboxHeldSQL string
	//go:embed sql/retention_related.sql
	retentionRelatedSQL string
	//go:embed sql/partition_busy.sql
	partitionBusySQL string
)

// Execer runs a statement whose rows nobody reads: a pool, a connection or
// a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Expired selects what a retention pass deletes of a set of sources.
type Expired struct {
	Cutoff time.Time // received (created, updated) before
	// Sources and Include: the listed sources, or (Include false) every
	// source but them.
	Sources []string
	Include bool
	Batch   int // the most rows of each table one statement deletes
	// SkipFrom and SkipTo bound the inbox ids of partitions retention
	// will drop whole once they expire, whose deliveries received before
	// SkipAfter are deleted all the same (inbox.Retired). Equal when none.
	SkipFrom, SkipTo int64
	SkipAfter        time.Time
}

func (x Expired) args() pgx.NamedArgs {
	return pgx.NamedArgs{"cutoff": x.Cutoff, "sources": x.Sources, "include": x.Include, "batch": x.Batch,
		"skip_from": x.SkipFrom, "skip_to": x.SkipTo, "skip_after": x.SkipAfter}
}

// DeleteExpiredDeliveries deletes one batch of the expired deliveries x
// selects that are finished, with their keys, outcomes and replay records
// (retention_inbox.sql), and returns how many: fewer than x.Batch when
// none is left. It keeps a delivery not yet handled or failed, and one
// whose follow-up work (a handler's step, a queued replay, a destination
// send) is unfinished.
func DeleteExpiredDeliveries(ctx context.Context, e Execer, x Expired) (int64, error) {
	tag, err := e.Exec(ctx, retentionInboxSQL, x.args())
	return tag.RowsAffected(), err
}

// CountHeldDeliveries counts the expired deliveries x selects that
// DeleteExpiredDeliveries keeps (retention_inbox_held.sql).
func CountHeldDeliveries(ctx context.Context, q RowQuerier, x Expired) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, retentionInboxHeldSQL, x.args()).Scan(&n)
	return n, err
}

// DeleteExpiredRelated deletes one batch of each table whose rows live and
// die with a source's deliveries (retention_related.sql): handler steps
// whose job is finished, resource versions, finished destination sends
// with their attempts, idle ordered-route turns. It returns how many rows
// in all: fewer than x.Batch when none is left.
func DeleteExpiredRelated(ctx context.Context, q RowQuerier, x Expired) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, retentionRelatedSQL, x.args()).Scan(&n)
	return n, err
}

// PartitionBusy reports whether the deliveries with inbox ids in [lo, hi)
// hold one retention keeps that a replay or an in-flight insert can have
// made since the partition was judged (partition_busy.sql): pending,
// failed, or with follow-up work unfinished. It reads only what is small,
// so it runs while the inbox is locked for a drop (inbox.Partitions.Busy).
func PartitionBusy(ctx context.Context, q RowQuerier, lo, hi int64) (bool, error) {
	var busy bool
	err := q.QueryRow(ctx, partitionBusySQL, pgx.NamedArgs{"lo": lo, "hi": hi}).Scan(&busy)
	return busy, err
}
