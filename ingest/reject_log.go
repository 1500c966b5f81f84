package ingest

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// rejectLog logs refused requests (4xx) at info, so an operator can see
// why a provider's deliveries bounce, without letting a flood of bad
// requests fill the disk: at most one line per (source, code) per
// interval, and the next line counts the ones held back. Keys are a
// configured source's name or "_unknown", and an error code from a fixed
// set, so the map stays small whatever the requests name.
type rejectLog struct {
	logger   *slog.Logger
	interval time.Duration

	mu   sync.Mutex
	keys map[rejectKey]*rejectState
}

type rejectKey struct{ source, code string }

type rejectState struct {
	last       time.Time
	suppressed int
}

func newRejectLog(logger *slog.Logger, interval time.Duration) *rejectLog {
	return &rejectLog{logger: logger, interval: interval, keys: map[rejectKey]*rejectState{}}
}

// log writes one line for a refused request, unless one for the same
// source and code was written less than the interval ago.
func (l *rejectLog) log(ctx context.Context, now time.Time, source, code string, status int, remote, message string) {
	k := rejectKey{source, code}
	l.mu.Lock()
	st, ok := l.keys[k]
	if !ok {
		st = &rejectState{}
		l.keys[k] = st
	}
	if ok && now.Sub(st.last) < l.interval {
		st.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := st.suppressed
	st.last, st.suppressed = now, 0
	l.mu.Unlock()

	attrs := []slog.Attr{slog.String("source", source), slog.String("code", code), slog.Int("status", status),
		slog.String("remote_addr", remote), slog.String("reason", message)}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed_since_last", suppressed))
	}
	l.logger.LogAttrs(ctx, slog.LevelInfo, "request rejected", attrs...)
}
