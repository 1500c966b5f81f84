package ingest

import (
	"context"
	_ "embed"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/ingest_minute_add.sql
var ingestMinuteAddSQL string

// Tally counts webhook requests per source, minute and outcome for the
// console's charts, in memory, and adds the counts to ingest_minute every
// few seconds in a statement of its own: the answer to a provider never
// waits for it, and a 4xx still writes nothing to the inbox. A crash
// loses the counts of the last flush interval, and a flush that fails
// keeps its counts for the next one: the chart may lag, the inbox is
// the record.
type Tally struct {
	pool   *pgxpool.Pool
	every  time.Duration
	logger *slog.Logger

	mu     sync.Mutex
	counts map[tallyKey]int64

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type tallyKey struct {
	minute          int64 // unix minute
	source, outcome string
}

// TallyConfig configures a Tally.
type TallyConfig struct {
	// FlushEvery is how often counts are written. Defaults to 5s.
	FlushEvery time.Duration
	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

// tallyMaxAge drops counts a failing database kept too long: the chart
// shows a day, and retention keeps two.
const tallyMaxAge = 24 * time.Hour

// NewTally starts a Tally's flusher; Close stops it.
func NewTally(pool *pgxpool.Pool, cfg TallyConfig) *Tally {
	if cfg.FlushEvery == 0 {
		cfg.FlushEvery = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Tally{pool: pool, every: cfg.FlushEvery, logger: cfg.Logger, counts: map[tallyKey]int64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go t.run()
	return t
}

// Add counts one request. source and outcome come from a fixed set (a
// configured source or "_unknown", an outcome or error code), so the
// counts stay few whatever the requests say.
func (t *Tally) Add(source, outcome string, at time.Time) {
	k := tallyKey{minute: at.Unix() / 60, source: source, outcome: outcome}
	t.mu.Lock()
	t.counts[k]++
	t.mu.Unlock()
}

func (t *Tally) run() {
	defer close(t.done)
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), t.every)
			if err := t.Flush(ctx); err != nil {
				t.logger.Warn("ingest counts not written; retrying at the next flush", "error", err)
			}
			cancel()
		}
	}
}

// Flush writes the counts so far. On failure they are kept for the next.
func (t *Tally) Flush(ctx context.Context) error {
	t.mu.Lock()
	counts := t.counts
	t.counts = map[tallyKey]int64{}
	t.mu.Unlock()
	if len(counts) == 0 {
		return nil
	}
	n := len(counts)
	minutes, sources, outcomes, values := make([]time.Time, 0, n), make([]string, 0, n), make([]string, 0, n), make([]int64, 0, n)
	for k, v := range counts {
		minutes = append(minutes, time.Unix(k.minute*60, 0))
		sources, outcomes, values = append(sources, k.source), append(outcomes, k.outcome), append(values, v)
	}
	_, err := t.pool.Exec(ctx, ingestMinuteAddSQL, pgx.NamedArgs{
		"minutes": minutes, "sources": sources, "outcomes": outcomes, "counts": values})
	if err != nil {
		t.keep(counts)
	}
	return err
}

// keep puts back counts a failed flush could not write, but those older
// than tallyMaxAge.
func (t *Tally) keep(counts map[tallyKey]int64) {
	oldest := time.Now().Add(-tallyMaxAge).Unix() / 60
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range counts {
		if k.minute >= oldest {
			t.counts[k] += v
		}
	}
}

// Close stops the flusher and writes what is left, bounded by ctx.
func (t *Tally) Close(ctx context.Context) error {
	t.closeOnce.Do(func() { close(t.stop) })
	<-t.done
	return t.Flush(ctx)
}
