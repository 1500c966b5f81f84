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
func claimTTL(d *dest) time.Duration { return maxRateLead + d.Timeout.Std() + claimMargin }

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

// claimLock is what a claim reads under the destination's state row, in
// the sender's first round trip. The state row is locked first, so the
// claims of all replicas are counted one after another: the live claims
// are the requests in flight (max_in_flight), the state row holds the
// next rate slot, the open circuit's next probe, and which sender found
// no slot free last (the others leave it one).
type claimLock struct {
	paused, open   bool
	nextProbe      *time.Time
	lastSlot       *time.Time // the last rate slot taken; nil: none yet
	now            time.Time
	wantedBy       *string
	inFlight, mine int
	more           bool // new ordered sends are left to put in line
}

// queueClaimLock queues the lock of the destination's state row, the
// count of requests in flight (a statement of its own after the lock, so
// that it sees the claims committed before) and the line-up of new
// ordered sends, so that those it makes due are claimed next.
func queueClaimLock(b *pgx.Batch, d *dest, instance string) *claimLock {
	lk := &claimLock{}
	b.Queue(stateClaimLockSQL, pgnamed.Args{"destination": d.Name}).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&lk.paused, &lk.open, &lk.nextProbe, &lk.lastSlot, &lk.now, &lk.wantedBy); err != nil {
			return fmt.Errorf("destination %s: lock state: %w", d.Name, err)
		}
		return nil
	})
	b.Queue(inFlightSQL, pgnamed.Args{"destination": d.Name, "instance": instance}).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&lk.inFlight, &lk.mine); err != nil {
			return fmt.Errorf("destination %s: count requests in flight: %w", d.Name, err)
		}
		return nil
	})
	queueLineUp(b, d, &lk.more)
	return lk
}

// claiming is a claim decided on its lock's answers: the sends it takes
// come back in the sender's second round trip.
type claiming struct {
	out        claimResult
	probe      bool
	slot       time.Duration // a rate slot's length; 0: no rate limit
	nextSendAt time.Time     // the first free rate slot
	now        time.Time     // the database's, as the state row was locked
	queued     bool          // the claim is queued (the limits let it claim)
}

// queueClaim decides from lk how many due sends of d the sender instance
// may take, up to want, and queues their claim, with its mark as starved
// of slots, or the mark's removal.
func queueClaim(b *pgx.Batch, d *dest, lk *claimLock, instance, holder string, want int) *claiming {
	c := &claiming{out: claimResult{more: lk.more, paused: lk.paused}, now: lk.now}
	if lk.paused {
		return c
	}
	free := d.MaxInFlight - lk.inFlight
	if free <= 0 {
		c.out.retryIn = ActivePollInterval // the requests in flight end soon
		if lk.mine != lk.inFlight {        // not every slot is this sender's own
			queueWanted(b, d, instance, &instance)
		}
		return c
	}
	if lk.wantedBy != nil && *lk.wantedBy != instance {
		free-- // the slot another sender waits for
	}
	n := min(want, free)
	if n <= 0 {
		c.out.retryIn = ActivePollInterval
		return c
	}
	if lk.wantedBy != nil && *lk.wantedBy == instance {
		queueWanted(b, d, instance, nil)
	}
	if lk.open {
		if lk.nextProbe != nil && lk.nextProbe.After(lk.now) {
			c.out.retryIn = lk.nextProbe.Sub(lk.now)
			return c
		}
		n, c.probe = 1, true
	}
	var wait time.Duration
	c.slot, c.nextSendAt, n, wait = rateSlots(d, lk.now, lk.lastSlot, n)
	if wait > 0 {
		c.out.retryIn = wait
		return c
	}
	b.Queue(sendClaimSQL, pgnamed.Args{
		"destination": d.Name, "slots": d.MaxInFlight, "limit": n, "holder": holder, "ttl": claimTTL(d), "with_input": d.exprs,
	}).Query(func(rows pgx.Rows) error {
		var err error
		if c.out.sends, err = collectClaimed(rows, holder, c.probe); err != nil {
			return fmt.Errorf("destination %s: claim sends: %w", d.Name, err)
		}
		return nil
	})
	c.queued = true
	return c
}

// mayTakeSlots reports whether the claim may take shared limits that
// the state row keeps, rate slots or the open circuit's probe: then
// what it took is written after it, in a round trip of its own.
func (c *claiming) mayTakeSlots(d *dest) bool {
	return c.queued && (c.probe || d.RateLimit > 0)
}

// queueSlots sets each claimed send's start on its rate slot and queues
// what the claim took of the shared limits (mayTakeSlots).
func (c *claiming) queueSlots(b *pgx.Batch, d *dest) {
	// Slots are on the database's clock; each send waits for its own
	// on this host's, by its offset from the database's now.
	local := time.Now()
	for i, l := range c.out.sends {
		l.startAt = local.Add(c.nextSendAt.Add(time.Duration(i) * c.slot).Sub(c.now))
	}
	next := c.nextSendAt
	if d.RateLimit > 0 {
		next = next.Add(time.Duration(len(c.out.sends)) * c.slot)
	}
	b.Queue(stateClaimedSQL, pgnamed.Args{
		"destination": d.Name, "next_send_at": next, "probe": c.probe, "probe_every": d.Circuit.ProbeEvery.Std(),
	})
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

// queueWanted queues the mark of instance as starved of slots (wantedBy
// set), or the removal of its mark.
func queueWanted(b *pgx.Batch, d *dest, instance string, wantedBy *string) {
	b.Queue(stateWantedSQL, pgnamed.Args{
		"destination": d.Name, "wanted_by": wantedBy, "instance": instance, "ttl": wantedFor,
	})
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
