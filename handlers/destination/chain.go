package destination

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

var (
	//go:embed sql/send_set_job.sql
	sendSetJobSQL string
	//go:embed sql/chain_claim.sql
	chainClaimSQL string
	//go:embed sql/chain_lock.sql
	chainLockSQL string
	//go:embed sql/chain_set_busy.sql
	chainSetBusySQL string
	//go:embed sql/chain_next.sql
	chainNextSQL string
)

// insertFunc inserts a River job in the caller's transaction.
type insertFunc func(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)

// inTx adapts a River client's InsertTx to insertFunc.
func inTx(client inserter, tx pgx.Tx) insertFunc {
	return func(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
		return client.InsertTx(ctx, tx, args, opts)
	}
}

// chainKey names one (destination, resource) of an ordered route.
type chainKey struct{ destination, source, resource string }

func (k chainKey) args() pgx.NamedArgs {
	return pgx.NamedArgs{"destination": k.destination, "source": k.source, "resource_key": k.resource}
}

// scheduleTx gives a waiting send its job, in tx. An ordered send gets it
// only when no other send of its (destination, resource) is in progress;
// otherwise it stays waiting, and the send in progress hands on the turn
// when it is done (finishChainTx).
func (s *Service) scheduleTx(ctx context.Context, tx pgx.Tx, insert insertFunc, sd sendRow) error {
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
	return s.startTx(ctx, tx, insert, sd.ID, sd.Destination)
}

// startTx inserts the job of a send and marks it pending.
func (s *Service) startTx(ctx context.Context, tx pgx.Tx, insert insertFunc, sendID int64, destination string) error {
	d, ok := s.dests[destination]
	if !ok {
		return fmt.Errorf("destination %q is not configured", destination)
	}
	res, err := insert(ctx, SendArgs{SendID: sendID, Destination: destination}, &river.InsertOpts{Queue: d.queue})
	if err != nil {
		return fmt.Errorf("enqueue send: %w", err)
	}
	if _, err := tx.Exec(ctx, sendSetJobSQL, pgx.NamedArgs{"id": sendID, "job_id": res.Job.ID}); err != nil {
		return fmt.Errorf("record send job: %w", err)
	}
	return nil
}

// finishChainTx hands the turn of a finished ordered send's (destination,
// resource) to the next waiting send, or frees it.
func (s *Service) finishChainTx(ctx context.Context, tx pgx.Tx, insert insertFunc, k chainKey) error {
	var busy bool
	if err := tx.QueryRow(ctx, chainLockSQL, k.args()).Scan(&busy); err != nil {
		return fmt.Errorf("lock resource turn: %w", err)
	}
	var (
		next int64
		dest string
	)
	err := tx.QueryRow(ctx, chainNextSQL, k.args()).Scan(&next, &dest)
	if errors.Is(err, pgx.ErrNoRows) {
		return setBusy(ctx, tx, k, false)
	}
	if err != nil {
		return fmt.Errorf("next send of the resource: %w", err)
	}
	return s.startTx(ctx, tx, insert, next, dest)
}

func setBusy(ctx context.Context, tx pgx.Tx, k chainKey, busy bool) error {
	args := k.args()
	args["busy"] = busy
	if _, err := tx.Exec(ctx, chainSetBusySQL, args); err != nil {
		return fmt.Errorf("mark resource turn: %w", err)
	}
	return nil
}
