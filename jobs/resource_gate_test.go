package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A resource's turn passes from worker to worker while any holds or wants
// it: a worker that comes while the turn is held waits, however many
// have held it before, so that only one worker of the process waits in
// the database for the resource. A turn forgotten while its last holder
// still holds it would let the next worker in at once, a second waiter
// in the database.
func TestAResourceGateTurnIsHeldUntilItsLastHolderLeaves(t *testing.T) {
	t.Parallel()
	g := newResourceGate()
	ctx := context.Background()
	releaseFirst, err := g.enter(ctx, "hot")
	require.NoError(t, err)

	second := make(chan func(), 1)
	go func() {
		release, err := g.enter(ctx, "hot")
		if err == nil {
			second <- release
		}
	}()
	require.Eventually(t, func() bool { return g.users("hot") == 2 }, 10*time.Second, time.Millisecond,
		"the second worker never came to the gate")
	releaseFirst()
	var releaseSecond func()
	select {
	case releaseSecond = <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("the second worker never got the turn its predecessor left")
	}

	// The second holds the turn: a third waits, here until its context ends.
	waitCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if release, err := g.enter(waitCtx, "hot"); err == nil {
		release()
		t.Fatal("a third worker got the turn while the second held it")
	}
	releaseSecond()
	require.Zero(t, g.users("hot"), "a turn nobody holds or wants is forgotten")
}

// users is how many workers hold or want key's turn.
func (g *resourceGate) users(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.turns[key]; t != nil {
		return t.users
	}
	return 0
}
