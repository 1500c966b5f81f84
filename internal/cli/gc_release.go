package cli

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// loadRelease hands the runtime's leftovers of a load back at once when the
// load ends. With serveGCPercent the heap may grow to five times what is
// live, and once requests stop nothing allocates enough to start a
// collection: the garbage stays until Go's forced collection, up to two
// minutes later, and meanwhile the background scavenger and sweeper work in
// small steps. After a load an idle serve used more CPU than before it until
// the forced collection, then spiked with it, and its RSS stayed high until
// then (bench/README.md, Design decisions, "Memory and garbage collection").
// One full collection as soon as a period is quiet pays the same work in one
// go and gives the memory back to the system right away.
type loadRelease struct {
	// Every is how often the allocation is read. Defaults to 5s.
	Every time.Duration
	// Quiet is the most a period may allocate and count as quiet: an idle
	// serve allocates about 80 kB in 5 s, a request with its processing
	// about 70 kB. Defaults to 1 MiB.
	Quiet uint64
	// MinGarbage is the least garbage worth a collection. Defaults to
	// 16 MiB.
	MinGarbage uint64
}

func (r loadRelease) withDefaults() loadRelease {
	if r.Every == 0 {
		r.Every = 5 * time.Second
	}
	if r.Quiet == 0 {
		r.Quiet = 1 << 20
	}
	if r.MinGarbage == 0 {
		r.MinGarbage = 16 << 20
	}
	return r
}

// heapReading is what decides a release, from runtime/metrics.
type heapReading struct {
	allocs  uint64 // bytes allocated since the process started
	objects uint64 // bytes of objects, live or not yet found dead
	live    uint64 // bytes the last collection found live
}

var heapMetrics = []string{"/gc/heap/allocs:bytes", "/memory/classes/heap/objects:bytes", "/gc/heap/live:bytes"}

func readHeap() heapReading {
	s := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	return heapReading{allocs: s[0].Value.Uint64(), objects: s[1].Value.Uint64(), live: s[2].Value.Uint64()}
}

// due reports whether the period from prev to cur was quiet and left
// garbage worth collecting. After a release the garbage is gone, so a
// long idle spell releases once.
func (r loadRelease) due(prev, cur heapReading) bool {
	return cur.allocs-prev.allocs < r.Quiet && cur.objects > cur.live && cur.objects-cur.live >= r.MinGarbage
}

// run releases after every load until ctx ends.
func (r loadRelease) run(ctx context.Context, logger *slog.Logger) {
	r = r.withDefaults()
	tick := time.NewTicker(r.Every)
	defer tick.Stop()
	prev := readHeap()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cur := readHeap()
		if r.due(prev, cur) {
			start := time.Now()
			debug.FreeOSMemory()
			cur = readHeap()
			logger.Debug("load over: garbage collected and memory returned to the system",
				"heap_bytes", cur.objects, "took", time.Since(start))
		}
		prev = cur
	}
}
