// Package procmem reads a Linux process's memory and CPU use from /proc,
// for the benchmarks and the drills (RSS bounds, CPU per request), and the
// machine's memory, by which the embedded PostgreSQL sizes its buffers.
package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 a second on
// every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// CPU returns the user and system CPU time the process has used, with that
// of its children it has reaped when withReaped, in 10 ms ticks: read it
// over spans of many ticks.
func CPU(pid int, withReaped bool) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after its ")" are fixed:
	// state first, then utime, stime, cutime and cstime as the 12th-15th.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(f))
	}
	fields := f[11:13]
	if withReaped {
		fields = f[11:15]
	}
	var ticks int64
	for _, v := range fields {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

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
