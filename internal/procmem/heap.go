package procmem

import "runtime"

// HeapInUse is this process's heap in use after a garbage collection: what
// a test that bounds its own server's memory compares before and after.
func HeapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
