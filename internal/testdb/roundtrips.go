package testdb

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RoundTrips records the round trips a pool's connections ask pgx for:
// each statement sent alone (Exec, Query, QueryRow, and a pgx.Tx's
// Begin, Commit and Rollback, which are such statements), each batch and
// each COPY, with the statements each carried. Those pgx makes on its own
// are not: preparing a statement the first time a connection sends it
// (an explicit Prepare goes unseen with them), a pool's ping. A test that
// counts round trips warms its path up first.
type RoundTrips struct {
	mu   sync.Mutex
	sent [][]string
}

// NewCounted is New with every round trip of the pool's connections
// recorded in the RoundTrips returned.
func NewCounted(t testing.TB) (*pgxpool.Pool, *RoundTrips) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL(t))
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	r := &RoundTrips{}
	cfg.ConnConfig.Tracer = r
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, r
}

// Reset forgets the round trips so far.
func (r *RoundTrips) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = nil
}

// Sent is each round trip since the last Reset: its statements' text, in
// the order sent.
func (r *RoundTrips) Sent() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.sent...)
}

// String lists Sent one round trip a line, each statement cut to its
// first line of SQL (comments skipped), for a failing test's message.
func (r *RoundTrips) String() string {
	var b strings.Builder
	for i, trip := range r.Sent() {
		if i > 0 {
			b.WriteString("\n")
		}
		for j, sql := range trip {
			if j > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(firstLine(sql))
		}
	}
	return b.String()
}

func (r *RoundTrips) add(sqls ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, sqls)
}

func (r *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(d.SQL)
	return ctx
}

func (r *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	sqls := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		sqls[i] = q.SQL
	}
	r.add(sqls...)
	return ctx
}

func (r *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (r *RoundTrips) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	r.add("COPY " + d.TableName.Sanitize())
	return ctx
}

func (r *RoundTrips) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// firstLine is sql's first line that is not a comment, at most 60 bytes.
func firstLine(sql string) string {
	for line := range strings.Lines(sql) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		if len(line) > 60 {
			line = line[:60] + "…"
		}
		return line
	}
	return ""
}
