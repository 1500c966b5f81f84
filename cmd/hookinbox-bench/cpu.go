package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/procmem"
)

// clockTicks is USER_HZ, the unit of /proc CPU times: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// cpuMeter splits the machine's CPU time between the processes of a run,
// from /proc: on a 2-core machine where everything competes for the same
// cores, "who used the CPU" explains a ratio better than any one number.
type cpuMeter struct {
	servicePID    int // 0: no service running
	postmasterPID int // 0: PostgreSQL is not ours to see
}

// cpuSample is cumulative CPU seconds.
type cpuSample struct {
	Machine  float64 // busy time of all CPUs
	Idle     float64
	IRQ      float64 // interrupts, mostly loopback TCP's softirq work, charged to no process
	Steal    float64 // taken by the hypervisor from this VM
	Bench    float64 // this process: the load generator, River's reference
	Service  float64
	Postgres float64 // postmaster, its live children and the children it reaped
	// Processes is how many processes and threads the machine has
	// started since boot.
	Processes int64
}

// cpuUse is the CPU seconds each part used during a phase.
type cpuUse struct {
	Seconds     float64 `json:"seconds"` // wall time
	MachineBusy float64 `json:"machine_busy_share"`
	Bench       float64 `json:"bench_cpu_s"`
	Service     float64 `json:"hookinbox_cpu_s"`
	Postgres    float64 `json:"postgres_cpu_s"`
	IRQ         float64 `json:"irq_cpu_s"`
	Steal       float64 `json:"steal_s"`
	Other       float64 `json:"other_cpu_s"` // pgbench itself, other tenants of the machine
	// AutovacuumRuns is the autovacuum and autoanalyze runs that finished
	// in the phase, on the service's and pgbench's tables: PostgreSQL CPU
	// that the phase's own work did not ask for.
	AutovacuumRuns int64 `json:"autovacuum_runs"`
	// ProcessesStarted is the processes and threads started on the
	// machine in the phase: PostgreSQL's backends and autovacuum workers,
	// and anything else that ran (a shell command in another window). On
	// the 2-core reference VM a burst of process starts stalls the
	// service's commits for up to a tenth of a second (bench/README.md,
	// "Steady load, one default serve": procs), so a slow tail in a phase
	// with many is the machine's, not the run's. Nil in older results
	// files.
	ProcessesStarted *int64 `json:"processes_started,omitempty"`
}

func (m cpuMeter) sample() cpuSample {
	var s cpuSample
	s.Machine, s.Idle, s.IRQ, s.Steal = machineCPU()
	s.Processes = processesStarted()
	s.Bench, _ = procCPU(os.Getpid(), false)
	if m.servicePID != 0 {
		s.Service, _ = procCPU(m.servicePID, false)
	}
	if m.postmasterPID != 0 {
		s.Postgres = postgresCPU(m.postmasterPID)
	}
	return s
}

// postgresCPU is the CPU time of a PostgreSQL server: the postmaster's,
// its live children's, and that of the children it reaped. A child reaped
// while we read would be counted in neither place, and the next reading
// would charge its whole life to the next phase; it happens by the dozen
// when a client disconnects its pool, so a reading is kept only when the
// postmaster reaped nothing while it was taken.
func postgresCPU(pm int) float64 {
	for range 20 {
		before, ok := procCPU(pm, true)
		if !ok {
			return 0
		}
		total := before
		for _, pid := range childrenOf(pm) {
			c, _ := procCPU(pid, false)
			total += c
		}
		if after, _ := procCPU(pm, true); after == before {
			return total
		}
	}
	return 0
}

func (a cpuSample) to(b cpuSample, wall float64) cpuUse {
	u := cpuUse{
		Seconds: wall, Bench: b.Bench - a.Bench, Service: b.Service - a.Service, Postgres: b.Postgres - a.Postgres,
		IRQ: b.IRQ - a.IRQ, Steal: b.Steal - a.Steal,
	}
	if b.Processes > 0 {
		started := b.Processes - a.Processes
		u.ProcessesStarted = &started
	}
	busy, idle := b.Machine-a.Machine, b.Idle-a.Idle
	if busy+idle > 0 {
		u.MachineBusy = busy / (busy + idle)
	}
	u.Other = max(busy-u.Bench-u.Service-u.Postgres-u.IRQ-u.Steal, 0)
	return u
}

// procCPU is a process's user+system seconds, plus those of the children
// it has reaped when withReaped is set (PostgreSQL backends that exited).
func procCPU(pid int, withReaped bool) (float64, bool) {
	d, err := procmem.CPU(pid, withReaped)
	return d.Seconds(), err == nil
}

func childrenOf(ppid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	want := strconv.Itoa(ppid)
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) > 1 && f[1] == want {
			out = append(out, int(atoi(filepath.Base(filepath.Dir(p)))))
		}
	}
	return out
}

// machineCPU reads the first line of /proc/stat: busy (everything but idle
// and iowait, steal included), idle, irq+softirq and steal seconds.
func machineCPU() (busy, idle, irq, steal float64) {
	line, _, _ := strings.Cut(readFile("/proc/stat"), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, 0
	}
	for i, v := range f[1:] {
		n := float64(atoi(v)) / clockTicks
		switch i {
		case 3, 4: // idle, iowait
			idle += n
			continue
		case 5, 6: // irq, softirq
			irq += n
		case 7:
			steal += n
		case 8, 9: // guest time is already in user
			continue
		}
		busy += n
	}
	return busy, idle, irq, steal
}

// processesStarted reads the "processes" line of /proc/stat: the forks
// and clones since boot (0 where there is none).
func processesStarted() int64 {
	for _, line := range strings.Split(readFile("/proc/stat"), "\n") {
		if n, ok := strings.CutPrefix(line, "processes "); ok {
			return atoi(strings.TrimSpace(n))
		}
	}
	return 0
}

// postmasterPID reads the first line of postmaster.pid in a data dir.
func postmasterPID(dataDir string) int {
	first, _, _ := strings.Cut(readFile(filepath.Join(dataDir, "postmaster.pid")), "\n")
	return int(atoi(strings.TrimSpace(first)))
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// span starts measuring a phase: who used the CPUs, and the autovacuum
// runs that finished on the tables of the databases at urls. The returned
// func ends the phase and returns its use.
func (m cpuMeter) span(ctx context.Context, pg *postgres, urls ...string) func() cpuUse {
	vacuums := pg.autovacuumRuns(ctx, urls...)
	before, t0 := m.sample(), time.Now()
	return func() cpuUse {
		use := before.to(m.sample(), time.Since(t0).Seconds())
		use.AutovacuumRuns = pg.autovacuumRuns(ctx, urls...) - vacuums
		return use
	}
}
