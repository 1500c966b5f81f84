package destination

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/state_init.sql
	stateInitSQL string
	//go:embed sql/state_claim_lock.sql
	stateClaimLockSQL string
	//go:embed sql/in_flight.sql
	inFlightSQL string
	//go:embed sql/send_claim.sql
	sendClaimSQL string
	//go:embed sql/state_claimed.sql
	stateClaimedSQL string
	//go:embed sql/state_wanted.sql
	stateWantedSQL string
)

const (
	// maxRateLead is how far ahead a claim may take rate slots: a send
	// waits at most that long for its slot, inside its claim.
	maxRateLead = time.Second
	// wantedFor is how long a starved sender's mark lasts: it claims
	// again well within it, and a dead one's mark fades.
	wantedFor = time.Second
	// claimMargin is added to the request timeout and maxRateLead for a
	// claim's life: a sender that died frees its sends that much after
	// their requests would have ended anyway. It also bounds how long
	// recording the outcomes may take before another sender may make the
	// same sends again (with the same keys).
	claimMargin = 10 * time.Second
)

// onceOK runs a function until it succeeds once.
type onceOK struct {
	mu   sync.Mutex
	done bool
}

func (o *onceOK) do(f func() error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	if err := f(); err != nil {
		return err
	}
	o.done = true
	return nil
}

// ensureShared creates the destination's shared state row the first time
// this process needs it.
func (s *Service) ensureShared(ctx context.Context, d *dest) error {
	return d.ready.do(func() error {
		if _, err := s.cfg.Pool.Exec(ctx, stateInitSQL, pgnamed.Args{"destination": d.Name, "slots": d.MaxInFlight}); err != nil {
			return fmt.Errorf("destination %s: init state: %w", d.Name, err)
		}
		return nil
	})
}

// claimTTL is how long a claim holds its sends.
func claimTTL(d *dest) time.Duration { return maxRateLead + d.Timeout + claimMargin }

// claimResult is what one claim got: the sends to make now, or, when it
// got none, why (and so when to look again).
type claimResult struct {
	sends []*loadedSend
	// retryIn, when no send was claimed for a reason other than an empty
	// queue (the circuit's next probe, the next rate slot, other
	// replicas' requests in flight), is when claiming may succeed.
	retryIn time.Duration
	paused  bool
	// more: new ordered sends are left for the next claim to put in line.
	more bool
}

// claimTx takes up to want due sends of d in tx for the sender instance.
// The destination's state row is locked first, so the claims of all
// replicas are counted one after another: the live claims are the
// requests in flight (max_in_flight), the state row holds the next rate
// slot, the open circuit's next probe, and which sender found no slot
// free last (the others leave it one).
func (s *Service) claimTx(ctx context.Context, tx pgx.Tx, d *dest, instance, holder string, want int) (claimResult, error) {
	var out claimResult
	err := func() error {
		var (
			paused, open bool
			nextProbe    *time.Time
			lastSlot     *time.Time // the last rate slot taken; nil: none yet
			now          time.Time
			wantedBy     *string
		)
		var inFlight, mine int
		var more bool
		// One round trip: the count runs after the lock is taken, in a
		// statement of its own, so it sees the claims committed before;
		// then new ordered sends are put in line, so that those made due
		// are claimed below.
		b := &pgx.Batch{}
		b.Queue(stateClaimLockSQL, pgnamed.Args{"destination": d.Name}).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&paused, &open, &nextProbe, &lastSlot, &now, &wantedBy); err != nil {
				return fmt.Errorf("lock state: %w", err)
			}
			return nil
		})
		b.Queue(inFlightSQL, pgnamed.Args{"destination": d.Name, "instance": instance}).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&inFlight, &mine); err != nil {
				return fmt.Errorf("count requests in flight: %w", err)
			}
			return nil
		})
		queueLineUp(b, d, &more)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("lock state, count requests in flight, line up ordered sends: %w", err)
		}
		out.more = more
		if paused {
			out.paused = true
			return nil
		}
		free := d.MaxInFlight - inFlight
		if free <= 0 {
			out.retryIn = ActivePollInterval // the requests in flight end soon
			if mine == inFlight {
				return nil // every slot is this sender's own
			}
			return s.markWanted(ctx, tx, d, instance, &instance)
		}
		starved := wantedBy != nil && *wantedBy != instance
		if starved {
			free-- // the slot another sender waits for
		}
		n := min(want, free)
		if n <= 0 {
			out.retryIn = ActivePollInterval
			return nil
		}
		if wantedBy != nil && *wantedBy == instance {
			if err := s.markWanted(ctx, tx, d, instance, nil); err != nil {
				return err
			}
		}
		probe := false
		if open {
			if nextProbe != nil && nextProbe.After(now) {
				out.retryIn = nextProbe.Sub(now)
				return nil
			}
			n, probe = 1, true
		}
		slot, nextSendAt, n, wait := rateSlots(d, now, lastSlot, n)
		if wait > 0 {
			out.retryIn = wait
			return nil
		}
		rows, err := tx.Query(ctx, sendClaimSQL, pgnamed.Args{
			"destination": d.Name, "slots": d.MaxInFlight, "limit": n, "holder": holder, "ttl": claimTTL(d), "with_input": d.exprs,
		})
		if err != nil {
			return fmt.Errorf("claim sends: %w", err)
		}
		if out.sends, err = collectClaimed(rows, holder, probe); err != nil {
			return fmt.Errorf("claim sends: %w", err)
		}
		if len(out.sends) == 0 || (!probe && d.RateLimit <= 0) {
			return nil
		}
		// Slots are on the database's clock; each send waits for its own
		// on this host's, by its offset from the database's now.
		local := time.Now()
		for i, l := range out.sends {
			l.startAt = local.Add(nextSendAt.Add(time.Duration(i) * slot).Sub(now))
		}
		if d.RateLimit > 0 {
			nextSendAt = nextSendAt.Add(time.Duration(len(out.sends)) * slot)
		}
		if _, err := tx.Exec(ctx, stateClaimedSQL, pgnamed.Args{
			"destination": d.Name, "next_send_at": nextSendAt, "probe": probe, "probe_every": d.Circuit.ProbeEvery,
		}); err != nil {
			return fmt.Errorf("take rate slots: %w", err)
		}
		return nil
	}()
	if err != nil {
		return claimResult{}, fmt.Errorf("destination %s: %w", d.Name, err)
	}
	return out, nil
}

// rateSlots is where a destination's rate limit puts the next n sends:
// the slot length (0: no limit), the first free slot, how many fit within
// maxRateLead, and how long to wait when none does.
func rateSlots(d *dest, now time.Time, lastSlot *time.Time, n int) (slot time.Duration, next time.Time, fit int, wait time.Duration) {
	next = now
	if lastSlot != nil {
		next = *lastSlot
	}
	if d.RateLimit <= 0 {
		return 0, next, n, 0
	}
	slot = max(time.Duration(float64(time.Second)/d.RateLimit), time.Nanosecond)
	next = maxTime(next, now)
	lead := now.Add(maxRateLead).Sub(next)
	if lead < 0 {
		return slot, next, 0, -lead
	}
	return slot, next, min(n, int(lead/slot)+1), 0
}

// collectClaimed reads the sends send_claim.sql claimed, telling each
// ordered one whether it is stale against what its resource's destination
// already got.
func collectClaimed(rows pgx.Rows, holder string, probe bool) ([]*loadedSend, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*loadedSend, error) {
		l := &loadedSend{holder: holder, probe: probe}
		var v handlers.Version
		err := row.Scan(&l.slot, &l.ID, &l.Source, &l.DeliveryID, &l.EventType, &l.Key, &l.Ordered, &l.SkipStale, &l.ResourceKey,
			&l.Resource.At, &l.Resource.ReceivedAt, &l.Resource.AtIsReceipt, &l.Attempts, &l.CreatedAt, &l.TraceParent,
			&l.Payload, &l.ContentType, &l.Header, &l.ReceivedAt, &v.At, &v.ReceivedAt, &v.ReceiptAt)
		if l.ResourceKey != nil {
			l.Resource.Key = *l.ResourceKey
		}
		l.Ordered = l.Ordered && l.ResourceKey != nil
		l.stale = l.Ordered && l.Resource.OlderThan(v)
		return l, err
	})
}

// markWanted marks instance as starved of slots (wantedBy set), or clears
// its mark.
func (s *Service) markWanted(ctx context.Context, tx pgx.Tx, d *dest, instance string, wantedBy *string) error {
	_, err := tx.Exec(ctx, stateWantedSQL, pgnamed.Args{
		"destination": d.Name, "wanted_by": wantedBy, "instance": instance, "ttl": wantedFor,
	})
	if err != nil {
		return fmt.Errorf("mark the sender waiting for a slot: %w", err)
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func newHolder() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
