package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// statementStat is one statement's share of a phase's database time, from
// pg_stat_statements.
type statementStat struct {
	Query      string  `json:"query"`
	Calls      int64   `json:"calls"`
	TotalMs    float64 `json:"total_ms"`
	MeanMs     float64 `json:"mean_ms"`
	RowsPerCal float64 `json:"rows_per_call"`
	// WALPerCall is the WAL bytes the statement wrote per call.
	WALPerCall float64 `json:"wal_bytes_per_call"`
	// FPIPerCall is the full-page images among that WAL, per call.
	FPIPerCall float64 `json:"wal_fpi_per_call"`
	// DirtiedPerCall and WrittenPerCall are the shared buffers it dirtied,
	// and the dirty ones it wrote out itself to make room, per call.
	DirtiedPerCall float64 `json:"blocks_dirtied_per_call"`
	WrittenPerCall float64 `json:"blocks_written_per_call"`
	// PlanMs is the time spent planning it, with -pg-setting
	// pg_stat_statements.track_planning=on (0 otherwise): a statement
	// planned for its arguments each time pays it on every call.
	PlanMs float64 `json:"plan_ms,omitempty"`
}

// statementStats reads pg_stat_statements around a phase when -pg-stats
// is on, and does nothing otherwise.
type statementStats struct {
	enabled bool
	db      *pgxpool.Pool
}

func createStatementStats(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		return fmt.Errorf("-pg-stats: %w", err)
	}
	return nil
}

func (s statementStats) reset(ctx context.Context) {
	if s.enabled {
		_, _ = s.db.Exec(ctx, "SELECT pg_stat_statements_reset()")
	}
}

// read returns the top statements since the last reset; nil when off.
func (s statementStats) read(ctx context.Context) []statementStat {
	if !s.enabled {
		return nil
	}
	rows, err := s.db.Query(ctx, `SELECT query, calls, total_exec_time, mean_exec_time, rows::float8 / greatest(calls, 1),
			wal_bytes::float8 / greatest(calls, 1), total_plan_time, wal_fpi::float8 / greatest(calls, 1),
			shared_blks_dirtied::float8 / greatest(calls, 1), shared_blks_written::float8 / greatest(calls, 1)
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time + total_plan_time DESC LIMIT 12`)
	if err != nil {
		return nil
	}
	var top []statementStat
	var st statementStat
	_, _ = pgx.ForEachRow(rows, []any{&st.Query, &st.Calls, &st.TotalMs, &st.MeanMs, &st.RowsPerCal, &st.WALPerCall, &st.PlanMs, &st.FPIPerCall, &st.DirtiedPerCall, &st.WrittenPerCall}, func() error {
		top = append(top, st)
		return nil
	})
	return top
}

// readInto stores the phase's top statements in r.
func (s statementStats) readInto(ctx context.Context, phase string, r *results) {
	top := s.read(ctx)
	if top == nil {
		return
	}
	if r.Statements == nil {
		r.Statements = map[string][]statementStat{}
	}
	r.Statements[phase] = top
}

var spaces = regexp.MustCompile(`\s+`)

func printStatements(w io.Writer, r results) {
	for _, phase := range []string{"ingest", "ingest_many", "drain"} {
		printStatementTable(w, phase, r.Statements[phase])
	}
}

// printStatementTable prints a phase's top statements, if any.
func printStatementTable(w io.Writer, phase string, top []statementStat) {
	if len(top) == 0 {
		return
	}
	fmt.Fprintf(w, "\nstatements by database time, %s (pg_stat_statements)\n", phase)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "total ms\tplan ms\tcalls\tmean ms\trows/call\tWAL B/call\tFPI/call\tdirtied/call\twritten/call\t query\n")
	for _, st := range top {
		fmt.Fprintf(tw, "%.0f\t%.0f\t%d\t%.3f\t%.1f\t%.0f\t%.2f\t%.2f\t%.2f\t %s\n", st.TotalMs, st.PlanMs, st.Calls, st.MeanMs, st.RowsPerCal,
			st.WALPerCall, st.FPIPerCall, st.DirtiedPerCall, st.WrittenPerCall, shortQuery(st.Query, 90))
	}
	tw.Flush()
}

// shortQuery is a statement's text on one line, cut after n bytes.
func shortQuery(query string, n int) string {
	q := strings.TrimSpace(spaces.ReplaceAllString(query, " "))
	if len(q) > n {
		q = q[:n] + "…"
	}
	return q
}
