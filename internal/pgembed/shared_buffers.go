package pgembed

import (
	"os"
	"strconv"
	"strings"
)

// A durable server's shared_buffers is an eighth of the memory it may use,
// at least PostgreSQL's default and at most sharedBuffersMax.
//
// PostgreSQL's default of 128MB is sized to start anywhere. Under a
// steady load the inbox's random-order indexes (delivery ids, resource
// keys) outgrow it within minutes, and every insert then reads a leaf
// page back from the page cache and evicts, often writing, another. In
// the steady benchmark's five-minute held step at 2,500 deliveries/s,
// 512MB took the seconds with an ack p99 over 25 ms from 79-80 to 66, and
// with the kernel's write-back smoothed (README, "Sizing") the step's ack
// p99 from 30 ms to 22 ms (bench/README.md, "Stop 39"). An eighth leaves
// the rest of a small machine or container to hookinbox, the page cache
// and PostgreSQL's per-connection memory.
const (
	sharedBuffersMin = 128 << 20
	sharedBuffersMax = 512 << 20
)

// sharedBuffersSetting is the shared_buffers a durable server runs with
// on this machine, as postgres -c takes it.
func sharedBuffersSetting() string {
	return "shared_buffers=" + strconv.FormatInt(sharedBuffersFor(usableMemory())>>20, 10) + "MB"
}

// sharedBuffersFor sizes shared_buffers for memory bytes (0: unknown).
func sharedBuffersFor(memory int64) int64 {
	if memory <= 0 {
		return sharedBuffersMin
	}
	return min(max(memory/8, sharedBuffersMin), sharedBuffersMax)
}

// usableMemory is the machine's memory, or the container's limit where it
// is lower (cgroup v2, then v1); 0 where neither can be read.
func usableMemory() int64 {
	memory := memTotal(readText("/proc/meminfo"))
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		// "max" (no limit) or v1's near-2^63 "no limit" fail or exceed
		// the machine and change nothing.
		if limit, err := strconv.ParseInt(readText(path), 10, 64); err == nil && limit > 0 && (memory == 0 || limit < memory) {
			memory = limit
		}
	}
	return memory
}

// memTotal reads MemTotal out of /proc/meminfo's text, in bytes.
func memTotal(meminfo string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func readText(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}
