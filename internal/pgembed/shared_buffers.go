package pgembed

import (
	"strconv"

	"github.com/hookinbox/hookinbox/internal/procmem"
)

// A durable server's shared_buffers is an eighth of the memory it may use,
// at least PostgreSQL's default and at most sharedBuffersMax.
//
// PostgreSQL's default of 128MB is sized to start anywhere. Under a steady
// load the inbox's random-order indexes (delivery ids, resource keys) outgrow
// it within minutes, and every insert then reads a leaf page back from the
// page cache and evicts, often writing, another. In the steady benchmark's
// five-minute held step 512MB made fewer slow seconds and, with the kernel's
// write-back smoothed (docs/operations.md, "Sizing"), a lower ack p99
// (bench/README.md, Design decisions, "Buffer pool size"). An eighth leaves
// the rest of a small machine or container to hookinbox, the page cache and
// PostgreSQL's per-connection memory.
const (
	sharedBuffersMin = 128 << 20
	sharedBuffersMax = 512 << 20
)

// sharedBuffersSetting is the shared_buffers a durable server runs with
// on this machine, as postgres -c takes it.
func sharedBuffersSetting() string {
	return "shared_buffers=" + strconv.FormatInt(sharedBuffersFor(procmem.UsableMemory())>>20, 10) + "MB"
}

// sharedBuffersFor sizes shared_buffers for memory bytes (0: unknown).
func sharedBuffersFor(memory int64) int64 {
	if memory <= 0 {
		return sharedBuffersMin
	}
	return min(max(memory/8, sharedBuffersMin), sharedBuffersMax)
}
