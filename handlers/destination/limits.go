package destination

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/state_init.sql
	stateInitSQL string
	//go:embed sql/lease_init.sql
	leaseInitSQL string
	//go:embed sql/state_get.sql
	stateGetSQL string
	//go:embed sql/lease_acquire.sql
	leaseAcquireSQL string
	//go:embed sql/lease_release.sql
	leaseReleaseSQL string
	//go:embed sql/rate_reserve.sql
	rateReserveSQL string
	//go:embed sql/rate_next.sql
	rateNextSQL string
	//go:embed sql/circuit_claim_probe.sql
	circuitClaimProbeSQL string
)

const (
	// maxLeaseWait is how long a send waits in its job for a free slot
	// before snoozing.
	maxLeaseWait = time.Second
	// maxRateLead is how far ahead a send may reserve a rate slot: sends
	// that would wait longer snooze instead of holding a worker.
	maxRateLead = time.Second
	// leaseMargin is added to the request timeout for a lease's life: a
	// holder that died frees its slot that much after its request would
	// have ended anyway.
	leaseMargin = 10 * time.Second
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

// ensureShared creates the destination's shared rows (state, lease slots)
// the first time this process sends to it.
func (s *Service) ensureShared(ctx context.Context, d *dest) error {
	return d.ready.do(func() error {
		args := pgx.NamedArgs{"destination": d.Name, "max_in_flight": d.MaxInFlight}
		if _, err := s.cfg.Pool.Exec(ctx, stateInitSQL, args); err != nil {
			return fmt.Errorf("destination %s: init state: %w", d.Name, err)
		}
		if _, err := s.cfg.Pool.Exec(ctx, leaseInitSQL, args); err != nil {
			return fmt.Errorf("destination %s: init slots: %w", d.Name, err)
		}
		return nil
	})
}

type destState struct {
	paused, open bool
	nextProbe    time.Time
}

func (s *Service) state(ctx context.Context, name string) (destState, error) {
	var (
		st        destState
		nextProbe *time.Time
	)
	err := s.cfg.Pool.QueryRow(ctx, stateGetSQL, pgx.NamedArgs{"destination": name}).Scan(&st.paused, &st.open, &nextProbe)
	if err != nil {
		return st, fmt.Errorf("destination %s: read state: %w", name, err)
	}
	if nextProbe != nil {
		st.nextProbe = *nextProbe
	}
	return st, nil
}

// lease is a slot of a destination's max_in_flight, held for one request.
type lease struct {
	slot   int
	holder string
}

// acquire leases a free slot, polling for up to maxLeaseWait; nil when
// every slot stayed taken.
func (s *Service) acquire(ctx context.Context, d *dest) (*lease, error) {
	l := &lease{holder: newHolder()}
	deadline := time.Now().Add(maxLeaseWait)
	pause := 10 * time.Millisecond
	for {
		err := s.cfg.Pool.QueryRow(ctx, leaseAcquireSQL, pgx.NamedArgs{
			"destination": d.Name, "max_in_flight": d.MaxInFlight, "holder": l.holder, "ttl": d.Timeout + leaseMargin,
		}).Scan(&l.slot)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("destination %s: lease a slot: %w", d.Name, err)
		}
		if time.Now().Add(pause).After(deadline) {
			return nil, nil
		}
		select {
		case <-time.After(jitter(pause)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		pause = min(pause*2, 200*time.Millisecond)
	}
}

// release frees a slot outside any transaction (the request did not
// happen); record frees it in the outcome's transaction.
func (s *Service) release(ctx context.Context, d *dest, l *lease) {
	if _, err := s.cfg.Pool.Exec(context.WithoutCancel(ctx), leaseReleaseSQL, l.args(d.Name)); err != nil {
		s.logger.Warn("destination: could not release a slot; it frees itself when its lease expires",
			"destination", d.Name, "error", err)
	}
}

func (l *lease) args(destination string) pgx.NamedArgs {
	return pgx.NamedArgs{"destination": destination, "slot": l.slot, "holder": l.holder}
}

func newHolder() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// claimProbe takes the one request an open circuit lets through per
// probe_every; false when another send has it.
func (s *Service) claimProbe(ctx context.Context, d *dest) (bool, error) {
	var ok bool
	err := s.cfg.Pool.QueryRow(ctx, circuitClaimProbeSQL, pgx.NamedArgs{
		"destination": d.Name, "probe_every": d.Circuit.ProbeEvery,
	}).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("destination %s: claim probe: %w", d.Name, err)
	}
	return ok, nil
}

// reserveRate takes the next rate slot, when the destination has a rate
// limit: ok with how long to wait for it, or !ok with how long until a
// slot comes within maxRateLead.
func (s *Service) reserveRate(ctx context.Context, d *dest) (wait time.Duration, ok bool, err error) {
	if d.RateLimit <= 0 {
		return 0, true, nil
	}
	args := pgx.NamedArgs{
		"destination": d.Name, "interval": time.Duration(float64(time.Second) / d.RateLimit), "max_lead": maxRateLead,
	}
	var secs float64
	err = s.cfg.Pool.QueryRow(ctx, rateReserveSQL, args).Scan(&secs)
	if err == nil {
		return time.Duration(secs * float64(time.Second)), true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, fmt.Errorf("destination %s: rate slot: %w", d.Name, err)
	}
	if err := s.cfg.Pool.QueryRow(ctx, rateNextSQL, args).Scan(&secs); err != nil {
		return 0, false, fmt.Errorf("destination %s: rate slot: %w", d.Name, err)
	}
	return max(time.Duration(secs*float64(time.Second))-maxRateLead, 10*time.Millisecond), false, nil
}
