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
	//go:embed sql/chain_take_turn.sql
	chainTakeTurnSQL string
)

// scheduleTx makes a waiting send due, in tx. An ordered send becomes due
// only when no other send of its (destination, resource) is in progress;
// otherwise it stays waiting, and the send in progress hands on the turn
// when it is done (finishOrderedTx). One statement takes the turn and
// starts the send: it is on processing's path, once per ordered send.
func (s *Service) scheduleTx(ctx context.Context, tx pgx.Tx, sd sendRow) error {
	if !sd.Ordered {
		return startTx(ctx, tx, sd.ID)
	}
	if _, err := tx.Exec(ctx, chainTakeTurnSQL, pgnamed.Args{
		"destination": sd.Destination, "source": sd.Source, "resource_key": sd.Resource.Key, "id": sd.ID,
	}); err != nil {
		return fmt.Errorf("take resource turn: %w", err)
	}
	return nil
}

// startTx makes a send due now.
func startTx(ctx context.Context, tx pgx.Tx, sendID int64) error {
	if _, err := tx.Exec(ctx, sendStartSQL, pgnamed.Args{"id": sendID}); err != nil {
		return fmt.Errorf("start send: %w", err)
	}
	return nil
}
