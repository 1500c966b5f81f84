package destination

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

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
	if err := s.sayKnown(ctx); err != nil {
		return err
	}
	stopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	reqCtx, cut := context.WithCancel(context.WithoutCancel(ctx))
	s.run.cancel, s.run.cut = cancel, cut
	for _, d := range s.dests {
		sn := &sender{svc: s, d: d, hints: make(chan struct{}, 1), results: make(chan result, d.MaxInFlight), instance: newHolder()}
		d.sender.Store(sn)
		s.run.running.Add(1)
		go func() {
			defer s.run.running.Done()
			sn.run(stopCtx, reqCtx)
		}()
	}
	s.run.running.Add(1)
	go func() {
		defer s.run.running.Done()
		s.sayKnownEvery(stopCtx, s.cfg.SeenEvery)
	}()
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
		d.sender.Store(nil)
		d.broker.close()
	}
	return err
}

// hint tells this process's sender of destination that a send is coming
// (its transaction has not committed yet): it looks often for a while.
func (s *Service) hint(destination string) {
	if d := s.dests[destination]; d != nil {
		if sn := d.sender.Load(); sn != nil {
			select {
			case sn.hints <- struct{}{}:
			default:
			}
		}
	}
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
// at a time, claiming the next sends in the same transaction. It returns
// when stop is done and every request it started is recorded.
func (sn *sender) run(stop, requests context.Context) {
	var (
		done        []result
		firstDone   time.Time
		nextClaim   time.Time
		lastClaim   time.Time
		activeUntil time.Time
		timer       = time.NewTimer(0)
	)
	defer timer.Stop()
	d := sn.d
	stopC := stop.Done()
	for {
		stopping := stop.Err() != nil
		if stopping {
			stopC = nil // else the select below spins while requests drain
		}
		if stopping && sn.inFlight == 0 {
			sn.cycle(stop, requests, done, 0)
			return
		}
		now := time.Now()
		flush := len(done) > 0 && (sn.inFlight == 0 || stopping || now.Sub(firstDone) >= flushWindow || len(done) >= d.MaxInFlight)
		// The outcomes waiting to be recorded still hold their claims: a
		// claim of its own waits for them, and then rides along in the
		// transaction that records them, which frees their slots.
		room := d.MaxInFlight - sn.inFlight
		claim := !stopping && room > 0 && len(done) == 0 && !now.Before(nextClaim)
		if flush && !stopping && room > 0 {
			claim = true
		}
		if flush || claim {
			if !claim {
				room = 0
			}
			got, wait, woke := sn.cycle(stop, requests, done, room)
			done = done[:0]
			if claim {
				lastClaim = now
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
			if woke {
				nextClaim, activeUntil = time.Now(), time.Now().Add(activeFor)
			}
			continue
		}
		wake := nextClaim
		if room <= 0 || len(done) > 0 {
			wake = now.Add(time.Hour) // nothing to claim until a result comes back
		}
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
			// The send is not committed yet: look on the active poll's
			// beat, not now (a claim per hint would mostly find nothing).
			activeUntil = time.Now().Add(activeFor)
			if soon := lastClaim.Add(ActivePollInterval); soon.Before(nextClaim) {
				nextClaim = soon
			}
		case <-timer.C:
		case <-stopC:
		}
	}
}

// cycle records results and claims up to room sends, in one transaction,
// and starts the claimed sends' requests. It returns how many it started,
// when to claim again if that is known (0: poll), and whether to claim
// again at once: a send became due by the outcomes (a resource's turn
// handed on, the circuit closed), or new ordered sends are left to put in
// line. Recording is tried again a few times; then the claims expire
// and the sends are made again, with the same keys.
func (sn *sender) cycle(stop, requests context.Context, results []result, room int) (int, time.Duration, bool) {
	s, d := sn.svc, sn.d
	if room > 0 {
		if err := s.ensureShared(stop, d); err != nil {
			s.logger.Warn("destination: cannot send", "destination", d.Name, "error", err)
			room = 0
		}
	}
	if len(results) == 0 && room == 0 {
		return 0, errorBackoff, false
	}
	holder := fmt.Sprintf("%s/%d", sn.instance, sn.claims.Add(1))
	tries := recordTries
	if stop.Err() != nil {
		tries = 1 // within the shutdown's budget; the claims expire otherwise
	}
	for try := 1; ; try++ {
		// Recording outlives stop: the requests were made.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), claimMargin)
		rec, got, err := s.recordAndClaim(ctx, d, sn.instance, holder, results, room, try > 1)
		cancel()
		if err == nil {
			s.report(stop, d, rec)
			for _, l := range got.sends {
				sn.inFlight++
				go sn.make(requests, l)
			}
			return len(got.sends), got.retryIn, rec.woke || got.more
		}
		if len(results) == 0 {
			if stop.Err() == nil {
				s.logger.Warn("destination: claiming sends failed; trying again", "destination", d.Name, "error", err)
			}
			return 0, errorBackoff, false
		}
		if try >= tries {
			s.logger.Error("destination: outcomes not recorded; their sends are made again, with the same keys, when their claims expire",
				"destination", d.Name, "sends", len(results), "error", err)
			return 0, errorBackoff, false
		}
		s.logger.Warn("destination: recording outcomes failed; trying again", "destination", d.Name, "error", err)
		room = 0 // record alone next time
		time.Sleep(time.Duration(try) * 200 * time.Millisecond)
	}
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
	case !sn.svc.routeAtSend(sn.d, l, &r):
		// filtered out, or its route failed to evaluate
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
		// Cut only when shutdown ended the request before an answer came:
		// an answer, even one read as the deadline passed, is recorded.
		r.cut = r.res.status == 0 && ctx.Err() != nil
	}
	sn.results <- r
}
