package destination

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgpipe"
)

// recordAndClaim records a sender's results and claims up to room sends,
// in one transaction of two round trips, three when the claim takes rate
// slots or the open circuit's probe: each round trip's statements need
// the answers of the one before. A cycle is on the path between a slot's
// request and its next, and under load a round trip costs about what its
// statements do.
//
// The first records the outcomes, attempts and the circuit, locks the
// destination's state row, counts the requests in flight and puts new
// ordered sends in line. The second, which needs to know which sends the
// first moved, whether it closed the circuit, and the slots it left free,
// hands the finished ordered sends' turns on and claims due sends (the
// turns' next sends among them).
//
// An error in the last round trip may come after the server committed:
// the connection was lost before COMMIT's answer came, or the claimed
// rows could not be read here. The sender then records the same results
// again: no send moves twice (their claims are gone), again keeps their
// attempts and failures from being added twice, and the sends claimed
// are made once their claims expire, with the same keys.
func (s *Service) recordAndClaim(ctx context.Context, d *dest, instance, holder string, results []result, room int, again bool) (recorded, claimResult, error) {
	var (
		rc *recording
		lk *claimLock
		c  *claiming
	)
	conn, err := s.cfg.Pool.Acquire(ctx)
	if err != nil {
		return recorded{}, claimResult{}, fmt.Errorf("destination %s: acquire a connection: %w", d.Name, err)
	}
	defer pgpipe.Release(ctx, conn)
	// BEGIN rides in the first round trip and COMMIT in the last, where
	// pgx.BeginFunc spends a round trip on each (pgx.Batch.BeginTx saves
	// the BEGIN, but its Tx then spends one on Commit).
	tx := pgpipe.New(conn)
	tx.Queue("BEGIN")
	first := &pgx.Batch{}
	if len(results) > 0 {
		rc = queueRecord(first, d, results, again)
	}
	if room > 0 {
		lk = queueClaimLock(first, d, instance)
	}
	if err := send(ctx, tx, d, first, "record outcomes, lock the state, line up ordered sends", false); err != nil {
		return recorded{}, claimResult{}, err
	}
	second := &pgx.Batch{}
	if rc != nil {
		rc.queueTurns(second, d)
	}
	if lk != nil {
		c = queueClaim(second, d, lk, instance, holder, room)
	}
	mayTakeSlots := c != nil && c.mayTakeSlots(d)
	if err := send(ctx, tx, d, second, "hand on turns, claim sends", !mayTakeSlots); err != nil {
		return recorded{}, claimResult{}, err
	}
	if mayTakeSlots {
		third := &pgx.Batch{}
		if len(c.out.sends) > 0 {
			c.queueSlots(third, d)
		}
		if err := send(ctx, tx, d, third, "take rate slots", true); err != nil {
			return recorded{}, claimResult{}, err
		}
	}
	var (
		rec recorded
		got claimResult
	)
	if rc != nil {
		rec = rc.done()
	}
	if c != nil {
		got = c.out
	}
	return rec, got, nil
}

// send runs b's statements, after what tx carries, in one round trip, and
// commits after them when last. A statement queued without a callback
// fails unwrapped: the error says what the batch was doing.
func send(ctx context.Context, tx *pgpipe.Pipe, d *dest, b *pgx.Batch, what string, last bool) error {
	var (
		res pgx.BatchResults
		err error
	)
	if last {
		res, err = tx.SendCommit(ctx, b)
	} else {
		res, err = tx.Send(ctx, b)
	}
	if err == nil {
		err = res.Close()
	}
	if err != nil {
		return fmt.Errorf("destination %s: %s: %w", d.Name, what, err)
	}
	return nil
}
