package jobs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/worker_process_unsettled.sql
var workerProcessUnsettledSQL string

// legacyLooks is how many of its own looks Settle leaves a process of an
// older binary, which records no looks: the fixed wait this binary's
// Settle made before it waited for evidence.
const legacyLooks = 2

// Settle waits until every live process of another configuration has
// shown that it saw this one: it looked after Start's publish, and, if
// that look found it outdated, it had stopped fetching processing jobs
// before it said so (recordLook). A process that reports ready after
// Settle therefore processes every delivery received from then on under
// its configuration, however late the older processes' looks come: a
// slow database or a long pause delays the readiness, not the promise.
//
// The wait is bounded: a process that says nothing for its live window
// (generationLiveFactor × its Every) counts as gone, and Settle logs that
// it went on without it; ctx bounds the rest. Call Settle after Start. A
// database error is logged and the wait goes on: a process that cannot
// reach the database processes nothing.
func (g *Generation) Settle(ctx context.Context) error {
	if g.since.IsZero() {
		return errors.New("jobs: Settle before Start")
	}
	tick := time.NewTicker(max(g.cfg.Every/4, time.Millisecond))
	defer tick.Stop()
	waiting := false
	for {
		left, err := g.unsettled(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				g.cfg.Logger.Warn(err.Error())
			}
		case left.pending == 0:
			for _, p := range left.silent {
				g.cfg.Logger.Warn("a process of another configuration stopped reporting before it saw this one: counted as gone",
					"process", p.id, "host", p.host, "its", p.fingerprint, "this", g.cfg.Fingerprint)
			}
			return nil
		case !waiting:
			waiting = true
			g.cfg.Logger.Info("waiting for the processes of other configurations to see this one before reporting ready",
				"processes", left.pending, "this", g.cfg.Fingerprint)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// unsettledProcess is a row of worker_process_unsettled.sql; id and host
// are empty for the configuration of an older binary.
type unsettledProcess struct {
	id, host    string
	fingerprint string
	silent      bool
}

type unsettled struct {
	pending int                // still to see this configuration
	silent  []unsettledProcess // gone before they saw it
}

func (g *Generation) unsettled(ctx context.Context) (unsettled, error) {
	var left unsettled
	rows, err := g.pool.Query(ctx, workerProcessUnsettledSQL, pgnamed.Args{"fingerprint": g.cfg.Fingerprint, "since": g.since,
		"live_secs": g.live(), "legacy_secs": (legacyLooks * g.cfg.Every).Seconds()})
	if err != nil {
		return left, fmt.Errorf("jobs: look for processes that have not seen this configuration: %w", err)
	}
	var p unsettledProcess
	_, err = pgx.ForEachRow(rows, []any{&p.id, &p.host, &p.fingerprint, &p.silent}, func() error {
		if p.silent {
			left.silent = append(left.silent, p)
		} else {
			left.pending++
		}
		return nil
	})
	if err != nil {
		return left, fmt.Errorf("jobs: look for processes that have not seen this configuration: %w", err)
	}
	return left, nil
}

// recordLook records a look that began at and found newest the newest
// configuration, once its outcome has taken effect: the processes of the
// configurations it found older wait for it (Settle). Outdated, this
// process has stopped fetching processing jobs when the deliveries queue
// is removed, which the queue's switch does apart from the look (and
// after the jobs running then finish): until then the look is not
// recorded, and a later one is once the queue is out.
func (g *Generation) recordLook(ctx context.Context, newest string, at time.Time) error {
	if !g.lookApplied() {
		return nil
	}
	_, err := g.pool.Exec(ctx, workerProcessLookedSQL, pgnamed.Args{"id": g.id, "looked_at": at, "newest": newest})
	if err != nil {
		return fmt.Errorf("jobs: record this process's look: %w", err)
	}
	return nil
}

// lookApplied reports whether this process fetches only the processing
// jobs it processes under its configuration: it is not outdated, or it
// processes under it on purpose (stalled, the bounded wait's end), or its
// deliveries queue is out (or it has none: no client works jobs here).
func (g *Generation) lookApplied() bool {
	if !g.outdated.Load() || g.stalled.Load() {
		return true
	}
	q := g.queue.Load()
	return q == nil || q.stopped.Load()
}

// Leave says that this process works no more jobs, so that the processes
// of newer configurations starting after it do not wait for its looks
// (Settle), nor, for its live window, for it to go silent: call it once
// the ctx given to Start has ended and the River client has stopped. It
// waits for the looks Start began to end.
func (g *Generation) Leave(ctx context.Context) error {
	if g.running.Load() {
		select {
		case <-g.ran:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := g.pool.Exec(ctx, workerProcessLeaveSQL, pgnamed.Args{"id": g.id}); err != nil {
		return fmt.Errorf("jobs: say this process works no more jobs: %w", err)
	}
	return nil
}
