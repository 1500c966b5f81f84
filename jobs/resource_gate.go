package jobs

import (
	"context"
	"sync"
)

// resourceGate lets one worker of this process at a time wait, in the
// database, for a resource another transaction holds. A delivery waits for
// its resource inside its transaction, so on a pool connection; a burst of
// one resource's deliveries (one issue edited by a bot, say) waiting so
// would hold the whole pool, which intake and every other resource need
// too. Behind the gate the others wait without a connection (each still
// holds its River worker).
type resourceGate struct {
	mu    sync.Mutex
	turns map[string]*gateTurn
}

// gateTurn is one resource's gate: a token to hold, and how many workers
// hold or want it (the entry goes when none do).
type gateTurn struct {
	token chan struct{}
	users int
}

func newResourceGate() *resourceGate { return &resourceGate{turns: map[string]*gateTurn{}} }

// enter waits for key's turn, or for ctx. The caller calls the release it
// gets once its transaction has ended.
func (g *resourceGate) enter(ctx context.Context, key string) (release func(), err error) {
	g.mu.Lock()
	t := g.turns[key]
	if t == nil {
		t = &gateTurn{token: make(chan struct{}, 1)}
		g.turns[key] = t
	}
	t.users++
	g.mu.Unlock()
	select {
	case t.token <- struct{}{}:
		return func() { <-t.token; g.leave(key, t) }, nil
	case <-ctx.Done():
		g.leave(key, t)
		return nil, ctx.Err()
	}
}

func (g *resourceGate) leave(key string, t *gateTurn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(g.turns, key)
	}
}
