package destination

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/send_start.sql
	sendStartSQL string
	//go:embed sql/chain_claim.sql
	chainClaimSQL string
	//go:embed sql/chain_start.sql
	chainStartSQL string
)

// scheduleTx makes a waiting send due, in tx. An ordered send becomes due
// only when no other send of its (destination, resource) is in progress;
// otherwise it stays waiting, and the send in progress hands on the turn
// when it is done (finishOrderedTx).
func (s *Service) scheduleTx(ctx context.Context, tx pgx.Tx, sd sendRow) error {
	if !sd.Ordered {
		return startTx(ctx, tx, sd.ID)
	}
	b := &pgx.Batch{}
	for _, q := range turnStatements(sd) {
		b.Queue(q.SQL, q.Arguments...)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("take resource turn: %w", err)
	}
	return nil
}

// turnStatements take a waiting ordered send's turn if it is free: the
// resource's row made or locked, then, in a statement that sees every
// turn handed on before the lock, the turn taken and the send started.
// None needs the result of another, so processing defers them with the
// send's insert: an ordered send costs it no round trip of its own.
func turnStatements(sd sendRow) []*pgx.QueuedQuery {
	res := pgnamed.Args{"destination": sd.Destination, "source": sd.Source, "resource_key": sd.Resource.Key}
	start := pgnamed.Args{"destination": sd.Destination, "source": sd.Source, "resource_key": sd.Resource.Key,
		"delivery_id": sd.DeliveryID}
	return []*pgx.QueuedQuery{
		{SQL: chainClaimSQL, Arguments: []any{res}},
		{SQL: chainStartSQL, Arguments: []any{start}},
	}
}

// startTx makes a send due now.
func startTx(ctx context.Context, tx pgx.Tx, sendID int64) error {
	if _, err := tx.Exec(ctx, sendStartSQL, pgnamed.Args{"id": sendID}); err != nil {
		return fmt.Errorf("start send: %w", err)
	}
	return nil
}
