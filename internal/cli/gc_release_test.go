package cli

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoadReleaseDue(t *testing.T) {
	t.Parallel()
	r := loadRelease{}.withDefaults()
	const mib = 1 << 20
	prev := heapReading{allocs: 500 * mib}
	for _, tt := range []struct {
		name string
		cur  heapReading
		want bool
	}{
		{"quiet, with the load's garbage", heapReading{allocs: 500*mib + 80<<10, objects: 90 * mib, live: 20 * mib}, true},
		{"still busy", heapReading{allocs: 530 * mib, objects: 90 * mib, live: 20 * mib}, false},
		{"quiet, little garbage", heapReading{allocs: 500*mib + 80<<10, objects: 30 * mib, live: 20 * mib}, false},
		{"quiet, live above objects (read between cycles)", heapReading{allocs: 500 * mib, objects: 20 * mib, live: 30 * mib}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, r.due(prev, tt.cur))
		})
	}
}

var sink [][]byte

// With the collector off, a load's garbage stays until run collects it
// once the allocation stops. Not parallel: the GC setting is the process's.
func TestLoadReleaseCollectsAfterTheLoad(t *testing.T) {
	prevPercent := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent) })
	runtime.GC()
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	for i := 0; i < 64; i++ { // the "load": 64 MiB, dropped at once
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loadRelease{Every: 20 * time.Millisecond, Quiet: 4 << 20}.run(ctx, slog.New(slog.DiscardHandler))
	}()
	// The forced count rises when the collection's marking ends, before
	// its sweep has taken the dead objects out of the heap's objects: both
	// are waited for (reading the heap right after the count once saw the
	// 64 MiB still there).
	garbage := func() uint64 {
		h := readHeap()
		return h.objects - min(h.objects, h.live)
	}
	require.Eventually(t, func() bool { return forced() > before && garbage() < 16<<20 }, 5*time.Second, 10*time.Millisecond,
		"no collection of the load's garbage")
	cancel()
	<-done
}
