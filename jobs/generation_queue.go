package jobs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// processingQueue is the River client's deliveries queue, which an
// outdated process does not work.
type processingQueue struct {
	mu      sync.Mutex
	queues  *river.QueueBundle
	name    string
	config  river.QueueConfig
	removed bool
	// stopped mirrors removed && !unsure for readers without mu (a
	// switch holds mu while River's jobs finish): River holds no producer
	// of the queue, and none of its jobs runs.
	stopped atomic.Bool
	// unsure: an Add or Remove failed, and River may hold a producer that
	// does not run (an Add whose start failed stays in the client; a
	// Remove cut short leaves its producer stopping). The next attempt
	// removes it before anything else.
	unsure bool
	// removeAfter (Unix ns) holds a removal back until River's start is
	// done (startGrace).
	removeAfter atomic.Int64
}

// riverWorks notes that the River client has just started: a removal of
// the processing queue waits startGrace.
func (g *Generation) riverWorks() {
	if q := g.queue.Load(); q != nil {
		q.removeAfter.Store(time.Now().Add(startGrace).UnixNano())
	}
}

// startGrace is how long after River starts working a removal of the
// processing queue waits. River's client, once started, waits for each
// producer it started to say so; a producer removed before it is waited
// for never says so, and the client's Stop would hang (river v0.51.2).
const startGrace = time.Second

// queueStopTimeout bounds the wait for the processing jobs running when
// the process becomes outdated (Remove waits for them); a stop that takes
// longer is tried again.
const queueStopTimeout = time.Minute

// attach has the Generation remove the client's processing queue while a
// newer configuration runs and add it back after. NewClient calls it.
func (g *Generation) attach(queues *river.QueueBundle, name string, config river.QueueConfig) {
	g.queue.Store(&processingQueue{queues: queues, name: name, config: config})
	g.applyQueue()
}

// applyQueue brings the processing queue in line with the latest look:
// removed while outdated, worked otherwise. It reads the state under the
// queue's lock, so calls that overlap end in the latest state; one that
// fails is tried again after a look's interval, from a clean removal.
func (g *Generation) applyQueue() {
	q := g.queue.Load()
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	defer func() { q.stopped.Store(q.removed && !q.unsure) }()
	remove := g.outdated.Load() && !g.stalled.Load()
	if remove == q.removed && !q.unsure {
		return
	}
	err := q.remove()
	if err == nil && !remove {
		if err = q.queues.Add(q.name, q.config); err == nil {
			q.removed = false
		}
	}
	if err != nil {
		q.unsure = true
		g.cfg.Logger.Warn("processing queue not switched; trying again", "remove", remove, "error", err)
		time.AfterFunc(g.cfg.Every, g.applyQueue)
		return
	}
	q.unsure = false
}

// remove removes the queue's producer if the client has one, and waits
// for its running jobs.
func (q *processingQueue) remove() error {
	if q.removed && !q.unsure {
		return nil
	}
	if wait := time.Until(time.Unix(0, q.removeAfter.Load())); wait > 0 {
		time.Sleep(wait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), queueStopTimeout)
	defer cancel()
	err := q.queues.Remove(ctx, q.name)
	var notFound *river.QueueNotFoundError
	if err == nil || errors.As(err, &notFound) {
		q.removed = true
		return nil
	}
	return err
}

// stallAfter is how long processing jobs may wait with none running,
// while this process is outdated, before it concludes that no newer
// process takes them (they are wedged, or none of them works the
// deliveries queue) and processes them under its own configuration.
func (g *Generation) stallAfter() time.Duration { return MaxDeferrals * g.cfg.Every }

// lookForStall sets stalled. Outdated, a process is stalled once every
// look for stallAfter found a processing job due for longer than a look's
// interval and none running; it stays stalled, and processes, until a
// look finds none waiting. A job a killed process left running counts as
// running: the wait then lasts until River rescues it, erring towards the
// newer configuration.
func (g *Generation) lookForStall(ctx context.Context) {
	was := g.stalled.Load()
	stalled := false
	if q := g.queue.Load(); q != nil && g.outdated.Load() {
		waiting, working, err := riverdb.ProcessingStalled(ctx, g.pool, q.name, g.cfg.Every)
		if err != nil {
			return // keep the last answer
		}
		switch now := time.Now(); {
		case was:
			stalled = waiting
		case !waiting || working:
			g.waitingSince = time.Time{}
		case g.waitingSince.IsZero():
			g.waitingSince = now
		default:
			stalled = now.Sub(g.waitingSince) >= g.stallAfter()
		}
	}
	if stalled == was {
		return
	}
	g.stalled.Store(stalled)
	g.waitingSince = time.Time{}
	if stalled {
		g.cfg.Logger.Warn("no process of the newer configuration takes processing jobs: processing them under this one",
			"this", g.cfg.Fingerprint, "waited", g.stallAfter())
	} else if g.outdated.Load() {
		g.cfg.Logger.Info("processing jobs no longer wait: leaving them to the newer configuration again", "this", g.cfg.Fingerprint)
	}
	go g.applyQueue()
}
