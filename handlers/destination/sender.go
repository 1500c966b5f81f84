package destination

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/sends_abandon.sql
var sendsAbandonSQL string

const (
	// flushWindow is how long a finished request's outcome may wait to
	// be recorded with others: its claim (a slot of max_in_flight) is only
	// freed when it is recorded.
	flushWindow = 2 * time.Millisecond
	// activeFor is how long a sender keeps looking every
	// ActivePollInterval after a hint or a claim that found sends.
	activeFor = time.Second
	// errorBackoff is the wait after a failed claim or record.
	errorBackoff = time.Second
	// recordTries bounds how often a sender tries to record outcomes;
	// then the claims expire and the sends are made again, with the same
	// keys.
	recordTries = 5
)

// runState is the Service's senders while they run.
type runState struct {
	mu      sync.Mutex
	cancel  context.CancelFunc // stops claiming
	cut     context.CancelFunc // cuts requests short
	running sync.WaitGroup
}

// Start runs a sender per destination in this process until Stop. Only
// processes that work jobs start them (serve with role all or worker);
// several processes share the work through claims.
func (s *Service) Start(ctx context.Context) error {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	if s.run.cancel != nil {
		return errors.New("destination: already started")
	}
	if err := s.abandonUnconfigured(ctx); err != nil {
		return err
	}
	stopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	reqCtx, cut := context.WithCancel(context.WithoutCancel(ctx))
	s.run.cancel, s.run.cut = cancel, cut
	for _, d := range s.dests {
		sn := &sender{svc: s, d: d, hints: make(chan struct{}, 1), results: make(chan result, d.MaxInFlight), instance: newHolder()}
		d.sender = sn
		s.run.running.Add(1)
		go func() {
			defer s.run.running.Done()
			sn.run(stopCtx, reqCtx)
		}()
	}
	return nil
}

// Stop stops claiming sends, lets the requests in flight end and records
// them, within ctx. Requests still running when ctx ends are cut short and
// left, with no attempt spent, to the next sender.
func (s *Service) Stop(ctx context.Context) error {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	if s.run.cancel == nil {
		return nil
	}
	s.run.cancel()
	done := make(chan struct{})
	go func() { s.run.running.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.run.cut()
		<-done
		err = ctx.Err()
	}
	s.run.cut()
	s.run.cancel, s.run.cut = nil, nil
	for _, d := range s.dests {
		d.sender = nil
	}
	return err
}

// hint tells this process's sender of destination that a send is coming
// (its transaction has not committed yet): it looks often for a while.
func (s *Service) hint(destination string) {
	if d := s.dests[destination]; d != nil {
		if sn := d.sender; sn != nil {
			select {
			case sn.hints <- struct{}{}:
			default:
			}
		}
	}
}

// abandonUnconfigured fails the unfinished sends of destinations no longer
// configured.
func (s *Service) abandonUnconfigured(ctx context.Context) error {
	tag, err := s.cfg.Pool.Exec(ctx, sendsAbandonSQL, pgx.NamedArgs{"destinations": s.Names()})
	if err != nil {
		return fmt.Errorf("destination: fail sends of removed destinations: %w", err)
	}
	if n := tag.RowsAffected(); n > 0 {
		s.logger.Error("destination: sends of destinations no longer configured failed; configure the destination again and retry them",
			"sends", n)
	}
	return nil
}

// sender makes one destination's sends from this process.
type sender struct {
	svc      *Service
	d        *dest
	hints    chan struct{}
	results  chan result
	instance string
	claims   atomic.Uint64
	inFlight int // requests started and not yet back in results
}

// run claims due sends while it has room under max_in_flight, makes each
// request in a goroutine, and records outcomes as they come back, a few
// at a time. It returns when stop is done and every request it started is
// recorded.
func (sn *sender) run(stop, requests context.Context) {
	var (
		done        []result
		firstDone   time.Time
		nextClaim   time.Time
		activeUntil time.Time
		timer       = time.NewTimer(0)
	)
	defer timer.Stop()
	d := sn.d
	for {
		stopping := stop.Err() != nil
		if stopping && sn.inFlight == 0 {
			sn.record(done)
			return
		}
		now := time.Now()
		room := d.MaxInFlight - sn.inFlight - len(done)
		if !stopping && room > 0 && !now.Before(nextClaim) {
			got, wait := sn.claim(stop, requests, room)
			if got > 0 {
				activeUntil = now.Add(activeFor)
			}
			if wait == 0 {
				wait = sn.svc.cfg.PollInterval
				if now.Before(activeUntil) {
					wait = ActivePollInterval
				}
			}
			if got == room {
				wait = 0 // more may be due
			}
			nextClaim = now.Add(wait)
		}
		if len(done) > 0 && (sn.inFlight == 0 || stopping || time.Since(firstDone) >= flushWindow || len(done) >= d.MaxInFlight) {
			if sn.record(done) {
				nextClaim, activeUntil = time.Now(), time.Now().Add(activeFor)
			}
			done = done[:0]
			continue
		}
		wake := nextClaim
		if len(done) > 0 && firstDone.Add(flushWindow).Before(wake) {
			wake = firstDone.Add(flushWindow)
		}
		timer.Reset(max(time.Until(wake), 0))
		select {
		case r := <-sn.results:
			sn.inFlight--
			if len(done) == 0 {
				firstDone = time.Now()
			}
			done = append(done, r)
		case <-sn.hints:
			nextClaim, activeUntil = time.Now(), time.Now().Add(activeFor)
		case <-timer.C:
		case <-stop.Done():
		}
	}
}

// claim claims up to room sends and starts their requests. It returns
// how many it started, and when to claim again if that is known (0: poll).
func (sn *sender) claim(stop, requests context.Context, room int) (int, time.Duration) {
	s, d := sn.svc, sn.d
	if err := s.ensureShared(stop, d); err != nil {
		s.logger.Warn("destination: cannot send", "destination", d.Name, "error", err)
		return 0, errorBackoff
	}
	holder := fmt.Sprintf("%s/%d", sn.instance, sn.claims.Add(1))
	got, err := s.claim(stop, d, holder, room)
	if err != nil {
		if stop.Err() == nil {
			s.logger.Warn("destination: claiming sends failed; trying again", "destination", d.Name, "error", err)
		}
		return 0, errorBackoff
	}
	if got.paused {
		return 0, 0
	}
	for _, l := range got.sends {
		sn.inFlight++
		go sn.make(requests, l)
	}
	return len(got.sends), got.retryIn
}

// make makes one claimed send's request, after its rate slot, and hands
// the result to run.
func (sn *sender) make(ctx context.Context, l *loadedSend) {
	r := result{send: l}
	switch {
	case l.Payload == nil:
		r.gone = true
	case l.stale && l.SkipStale:
		r.skipped = true
	default:
		if wait := time.Until(l.startAt); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			r.cut = true
			break
		}
		r.res = sn.svc.post(ctx, sn.d, l)
		r.cut = ctx.Err() != nil
	}
	sn.results <- r
}

// record records results, trying again a few times; it reports whether a
// send became due.
func (sn *sender) record(results []result) bool {
	if len(results) == 0 {
		return false
	}
	s := sn.svc
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), claimMargin)
		woke, err := s.record(ctx, sn.d, results)
		cancel()
		if err == nil {
			return woke
		}
		if try == recordTries {
			s.logger.Error("destination: outcomes not recorded; their sends are made again, with the same keys, when their claims expire",
				"destination", sn.d.Name, "sends", len(results), "error", err)
			return false
		}
		s.logger.Warn("destination: recording outcomes failed; trying again", "destination", sn.d.Name, "error", err)
		time.Sleep(time.Duration(try) * 200 * time.Millisecond)
	}
}
