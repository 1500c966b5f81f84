// Package pgnamed is pgx.NamedArgs with each statement rewritten once.
//
// pgx turns a statement's @name parameters into $n by lexing the whole
// statement, comments included, on every call. Under steady load that showed
// in one default serve's CPU profile (bench/README.md, Design decisions,
// "Payloads and JSON"): a processed delivery runs five such statements. Args
// does the same rewrite, by pgx's own NamedArgs, the first time it meets a
// statement and reuses it after.
//
// The cache is keyed by the statement's text and never shrinks: use Args
// with fixed statements (the embedded .sql files), not with SQL built from
// values.
package pgnamed

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Args are a statement's named parameters, as pgx.NamedArgs: pass them as
// the only argument of a query, Exec or batch Queue. A name the statement
// uses that Args lack is sent as NULL, as with pgx.NamedArgs.
type Args map[string]any

// rewrite is a statement with $n parameters, and the name behind each.
type rewrite struct {
	sql   string
	names []string
}

var rewrites sync.Map // statement text → *rewrite

// marker stands for a name's value while pgx rewrites a statement, so the
// order it puts the values in tells which name each $n is.
type marker string

// RewriteQuery implements pgx.QueryRewriter.
func (a Args) RewriteQuery(ctx context.Context, conn *pgx.Conn, sql string, args []any) (string, []any, error) {
	var r *rewrite
	if v, ok := rewrites.Load(sql); ok {
		r = v.(*rewrite)
	} else {
		learned, err := learn(ctx, conn, sql, a)
		if err != nil {
			return "", nil, err
		}
		if learned == nil {
			// sql uses a name a lacks, which the order cannot tell:
			// rewrite this call the slow way, learn on a later one.
			return pgx.NamedArgs(a).RewriteQuery(ctx, conn, sql, args)
		}
		rewrites.Store(sql, learned)
		r = learned
	}
	values := make([]any, len(r.names))
	for i, name := range r.names {
		values[i] = a[name]
	}
	return r.sql, values, nil
}

// learn rewrites sql with pgx.NamedArgs whose values are markers. It
// returns nil when sql uses a name a does not have.
func learn(ctx context.Context, conn *pgx.Conn, sql string, a Args) (*rewrite, error) {
	markers := make(pgx.NamedArgs, len(a))
	for name := range a {
		markers[name] = marker(name)
	}
	positional, order, err := markers.RewriteQuery(ctx, conn, sql, nil)
	if err != nil {
		return nil, err
	}
	r := &rewrite{sql: positional, names: make([]string, len(order))}
	for i, v := range order {
		name, ok := v.(marker)
		if !ok {
			return nil, nil
		}
		r.names[i] = string(name)
	}
	return r, nil
}
