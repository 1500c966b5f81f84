package pgsettings

import (
	"strconv"
	"strings"
)

// wantDirtyBackground is the vm.dirty_background_bytes docs/operations.md
// recommends: the kernel writes PostgreSQL's data back in small steps
// instead of a burst every 30 s that every commit's WAL flush waits behind.
const wantDirtyBackground = 64 << 20

// AdviseKernel says whether the Linux write-back of the machine
// PostgreSQL runs on (this one: call it only when the server is local)
// lets dirty data pile up for a burst. readFile reads /proc; memTotal is
// the machine's memory in bytes (0: unknown).
func AdviseKernel(readFile func(string) ([]byte, error), memTotal int64) []Advice {
	bytes, ok := readInt(readFile, "/proc/sys/vm/dirty_background_bytes")
	if !ok || bytes != 0 {
		return nil // set, or not Linux
	}
	ratio, ok := readInt(readFile, "/proc/sys/vm/dirty_background_ratio")
	if !ok || memTotal <= 0 || memTotal/100*ratio <= 4*wantDirtyBackground {
		return nil
	}
	return []Advice{{Setting: "vm.dirty_background_bytes", Value: "0 (" + strconv.FormatInt(ratio, 10) + "% of memory)",
		Want: "67108864 (sysctl -w vm.dirty_background_bytes=67108864)",
		Why:  "the kernel writes PostgreSQL's data files back in one burst about every 30 s, and every commit waits behind it"}}
}

func readInt(readFile func(string) ([]byte, error), path string) (int64, bool) {
	b, err := readFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
