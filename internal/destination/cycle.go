package destination

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
	tx, err := beginPipelined(ctx, s.cfg.Pool)
	if err != nil {
		return recorded{}, claimResult{}, fmt.Errorf("destination %s: %w", d.Name, err)
	}
	defer tx.end(ctx)
	first := tx.batch()
	if len(results) > 0 {
		rc = queueRecord(first, d, results, again)
	}
	if room > 0 {
		lk = queueClaimLock(first, d, instance)
	}
	if err := tx.send(ctx, d, first, "record outcomes, lock the state, line up ordered sends", false); err != nil {
		return recorded{}, claimResult{}, err
	}
	second := tx.batch()
	if rc != nil {
		rc.queueTurns(second, d)
	}
	if lk != nil {
		c = queueClaim(second, d, lk, instance, holder, room)
	}
	mayTakeSlots := c != nil && c.mayTakeSlots(d)
	if err := tx.send(ctx, d, second, "hand on turns, claim sends", !mayTakeSlots); err != nil {
		return recorded{}, claimResult{}, err
	}
	if mayTakeSlots {
		third := tx.batch()
		if len(c.out.sends) > 0 {
			c.queueSlots(third, d)
		}
		if err := tx.send(ctx, d, third, "take rate slots", true); err != nil {
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

// rollbackWithin bounds the rollback of a cycle that failed.
const rollbackWithin = 5 * time.Second

// pipelinedTx is a transaction on a pooled connection whose BEGIN rides in
// its first round trip and whose COMMIT rides in its last, where
// pgx.BeginFunc spends a round trip on each. (pgx.Batch.BeginTx saves the
// BEGIN, but its Tx then spends one on Commit or Rollback.)
type pipelinedTx struct {
	conn  *pgxpool.Conn
	begun bool
}

func beginPipelined(ctx context.Context, pool *pgxpool.Pool) (*pipelinedTx, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire a connection: %w", err)
	}
	return &pipelinedTx{conn: conn}, nil
}

// batch is the next round trip's batch: the first begins the
// transaction.
func (t *pipelinedTx) batch() *pgx.Batch {
	b := &pgx.Batch{}
	if !t.begun {
		b.Queue("BEGIN")
		t.begun = true
	}
	return b
}

// send runs b's statements in one round trip, and commits after them when
// last. A statement queued without a callback fails unwrapped: the error
// says what the batch was doing.
func (t *pipelinedTx) send(ctx context.Context, d *dest, b *pgx.Batch, what string, last bool) error {
	if last {
		b.Queue("COMMIT")
	}
	if err := t.conn.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("destination %s: %s: %w", d.Name, what, err)
	}
	return nil
}

// end rolls back a transaction left open by an error and releases the
// connection, even when the cycle's context has ended. A connection that
// cannot roll back is closed, not pooled.
func (t *pipelinedTx) end(ctx context.Context) {
	if t.conn.Conn().PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackWithin)
		_, _ = t.conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
	t.conn.Release()
}
