// Package procmem reads a Linux process's memory use from /proc, for the
// benchmark and the drills (RSS bounds).
package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Read returns the process's resident set size now (VmRSS) and its peak
// (VmHWM), in KiB.
func Read(pid int) (rssKB, peakKB int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch name {
		case "VmRSS":
			rssKB = n
		case "VmHWM":
			peakKB = n
		}
	}
	return rssKB, peakKB, sc.Err()
}
