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
	//go:embed sql/chain_lock.sql
	chainLockSQL string
	//go:embed sql/chain_set_busy.sql
	chainSetBusySQL string
)

// chainKey names one (destination, resource) of an ordered route.
type chainKey struct{ destination, source, resource string }

func (k chainKey) args() pgnamed.Args {
	return pgnamed.Args{"destination": k.destination, "source": k.source, "resource_key": k.resource}
}

// scheduleTx makes a waiting send due, in tx. An ordered send becomes due
// only when no other send of its (destination, resource) is in progress;
// otherwise it stays waiting, and the send in progress hands on the turn
// when it is done (finishOrderedTx).
func (s *Service) scheduleTx(ctx context.Context, tx pgx.Tx, sd sendRow) error {
	if sd.Ordered {
		k := chainKey{sd.Destination, sd.Source, sd.Resource.Key}
		if _, err := tx.Exec(ctx, chainClaimSQL, k.args()); err != nil {
			return fmt.Errorf("claim resource turn: %w", err)
		}
		var busy bool
		if err := tx.QueryRow(ctx, chainLockSQL, k.args()).Scan(&busy); err != nil {
			return fmt.Errorf("lock resource turn: %w", err)
		}
		if busy {
			return nil // its turn comes when the send in progress is done
		}
		if err := setBusy(ctx, tx, k, true); err != nil {
			return err
		}
	}
	return startTx(ctx, tx, sd.ID)
}

// startTx makes a send due now.
func startTx(ctx context.Context, tx pgx.Tx, sendID int64) error {
	if _, err := tx.Exec(ctx, sendStartSQL, pgnamed.Args{"id": sendID}); err != nil {
		return fmt.Errorf("start send: %w", err)
	}
	return nil
}

func setBusy(ctx context.Context, tx pgx.Tx, k chainKey, busy bool) error {
	args := k.args()
	args["busy"] = busy
	if _, err := tx.Exec(ctx, chainSetBusySQL, args); err != nil {
		return fmt.Errorf("mark resource turn: %w", err)
	}
	return nil
}
