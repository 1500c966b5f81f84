package procmem

import (
	"os"
	"strconv"
	"strings"
)

// MachineMemory is the machine's memory in bytes (/proc/meminfo's
// MemTotal); 0 where it cannot be read.
func MachineMemory() int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	return memTotal(string(b))
}

// UsableMemory is the machine's memory, or the container's limit where it
// is lower (cgroup v2, then v1); 0 where neither can be read.
func UsableMemory() int64 {
	memory := MachineMemory()
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, _ := os.ReadFile(path)
		// "max" (no limit) or v1's near-2^63 "no limit" fail or exceed
		// the machine and change nothing.
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && limit > 0 && (memory == 0 || limit < memory) {
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
