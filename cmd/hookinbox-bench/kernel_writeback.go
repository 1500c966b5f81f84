package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PostgreSQL writes a data page with write(2) and leaves it to the kernel
// until a checkpoint fsyncs the file. Linux writes such dirty pages back once
// they are dirty_expire_centisecs old (30 s by default), or sooner once the
// machine's dirty data passes dirty_background_ratio (10% of memory) or
// dirty_background_bytes: on a machine with memory to spare a steady load's
// data files then go to the disk in one burst about every 30 seconds. The
// held tail's slow seconds were there, WAL flushes (every commit) queued
// behind each burst (bench/README.md, Design decisions, "Kernel write-back").
// The sampler reads the kernel's counters beside the server's.

// kernelWriteback is the machine's dirty page cache and its writes to
// block devices at one moment.
type kernelWriteback struct {
	dirtyBytes   int64 // nr_dirty + nr_writeback: written, not yet on the disk
	writtenBytes int64 // pgpgout: written to block devices since boot
}

// readKernelWriteback reads /proc/vmstat (zeros where there is none).
func readKernelWriteback() kernelWriteback {
	return parseVMStat(readFile("/proc/vmstat"), int64(os.Getpagesize()))
}

// parseVMStat reads what kernelWriteback needs out of /proc/vmstat's
// text: nr_dirty and nr_writeback count pages, pgpgout counts KiB.
func parseVMStat(text string, pageSize int64) kernelWriteback {
	var k kernelWriteback
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch name {
		case "nr_dirty", "nr_writeback":
			k.dirtyBytes += atoi(strings.TrimSpace(value)) * pageSize
		case "pgpgout":
			k.writtenBytes = atoi(strings.TrimSpace(value)) * 1024
		}
	}
	return k
}

// describeWriteback says when the kernel starts writing dirty data back,
// e.g. "from 10% of memory or 30 s old", out of the vm sysctls that
// sysctl names (read by name, "" where there is none).
func describeWriteback(sysctl func(name string) string) string {
	expire, err := strconv.Atoi(sysctl("dirty_expire_centisecs"))
	if err != nil {
		return ""
	}
	from := sysctl("dirty_background_ratio") + "% of memory"
	if b, _ := strconv.ParseInt(sysctl("dirty_background_bytes"), 10, 64); b > 0 {
		from = fmt.Sprintf("%d MB dirty", b>>20)
	}
	return fmt.Sprintf("from %s or %g s old", from, float64(expire)/100)
}
