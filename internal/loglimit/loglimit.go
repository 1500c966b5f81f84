// Package loglimit caps how many lines a log site repeated per delivery
// writes a second.
//
// One info line per delivery on each side (ingest's "delivery accepted",
// processing's "delivery processed") is what a first-hour user reads to see
// webhooks arrive, and what a busy deployment pays for at every delivery: in
// the steady benchmark the two lines were a measurable share of serve's CPU
// (formatting and a write each) and megabytes of log a second
// (bench/README.md, Design decisions, "Delivery log lines"). A PerSecond lets
// the first lines of each second through and has the next line written say
// how many it held back, as the log of refused requests does
// (`suppressed_since_last`).
package loglimit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// PerSecond lets at most n lines through in each second. The zero value
// and a nil *PerSecond let every line through.
type PerSecond struct {
	n int

	mu          sync.Mutex
	windowStart time.Time
	inWindow    int // lines let through since windowStart
	heldBack    int // lines held back since the last one let through
}

// New returns a PerSecond for n lines a second; n <= 0 lets every line
// through.
func New(n int) *PerSecond {
	return &PerSecond{n: n}
}

// Allow reports whether a line may be written at now and, when it may,
// how many lines were held back since the last one written (to be logged
// with it).
func (p *PerSecond) Allow(now time.Time) (ok bool, heldBack int) {
	if p == nil || p.n <= 0 {
		return true, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.windowStart) >= time.Second || now.Before(p.windowStart) {
		p.windowStart, p.inWindow = now, 0
	}
	if p.inWindow >= p.n {
		p.heldBack++
		return false, 0
	}
	p.inWindow++
	heldBack, p.heldBack = p.heldBack, 0
	return true, heldBack
}

// ForLogger is New(n) for a site logging at info on logger, or a PerSecond
// that lets every line through when logger writes debug lines: whoever
// asks for debug wants every delivery's line.
func ForLogger(logger *slog.Logger, n int) *PerSecond {
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		return New(0)
	}
	return New(n)
}
