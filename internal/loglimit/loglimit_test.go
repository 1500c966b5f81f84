package loglimit

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPerSecond(t *testing.T) {
	t.Parallel()

	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	p := New(3)
	for i := 0; i < 3; i++ {
		ok, held := p.Allow(t0.Add(time.Duration(i) * time.Millisecond))
		require.True(t, ok, "line %d of the first second", i)
		require.Zero(t, held)
	}
	for i := 0; i < 5; i++ {
		ok, _ := p.Allow(t0.Add(500 * time.Millisecond))
		require.False(t, ok, "a fourth line within the second")
	}
	// The next second: its first line says how many were held back, the
	// next ones that none were.
	ok, held := p.Allow(t0.Add(time.Second))
	require.True(t, ok)
	require.Equal(t, 5, held)
	ok, held = p.Allow(t0.Add(time.Second + time.Millisecond))
	require.True(t, ok)
	require.Zero(t, held)

	// Held back at the end of a burst, counted on the next line, however
	// much later it comes.
	p.Allow(t0.Add(time.Second + 2*time.Millisecond))
	ok, _ = p.Allow(t0.Add(time.Second + 3*time.Millisecond))
	require.False(t, ok)
	ok, held = p.Allow(t0.Add(time.Hour))
	require.True(t, ok)
	require.Equal(t, 1, held)

	// A clock stepped back starts a new second rather than holding lines
	// back until it catches up.
	ok, _ = p.Allow(t0)
	require.True(t, ok)
}

func TestPerSecondUnlimited(t *testing.T) {
	t.Parallel()

	now := time.Now()
	for _, p := range []*PerSecond{nil, New(0), New(-1), {}} {
		for i := 0; i < 100; i++ {
			ok, held := p.Allow(now)
			require.True(t, ok)
			require.Zero(t, held)
		}
	}
}

// Every line is either let through or counted on a later line, with
// concurrent callers.
func TestPerSecondConcurrentAccounting(t *testing.T) {
	t.Parallel()

	p := New(7)
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		through, count int
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				ok, held := p.Allow(start.Add(time.Duration(i) * time.Millisecond))
				mu.Lock()
				if ok {
					through++
				}
				count += held
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	ok, held := p.Allow(start.Add(time.Hour))
	require.True(t, ok)
	require.Equal(t, 8000, through+count+held)
	require.Less(t, through, 8000, "the limit held some back")
}
