// Package pgsettings reads the PostgreSQL server's settings that decide
// whether an acknowledged delivery survives a crash and how long a commit
// waits under load, and says which are far from what hookinbox needs. Serve
// logs its advice once at start (docs/operations.md, "Checking your
// server").
package pgsettings

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Advice is one setting far from what hookinbox needs.
type Advice struct {
	Setting string // the server's, or the kernel's vm.* name
	Value   string // what it is
	Want    string // what to set
	Why     string
	// Durable is true when the setting can lose acknowledged deliveries
	// in a crash; otherwise it costs latency under load.
	Durable bool
}

// Settings are a server's settings by name: each value as SHOW prints it,
// and its size in bytes for the sizes.
type Settings map[string]Setting

// Setting is one row of pg_settings.
type Setting struct {
	Value string // as SHOW prints it: "1GB", "on"
	Bytes int64  // for a size (unit kB, MB or a number of 8kB pages); 0 otherwise
}

// names are the settings Advise reads.
var names = []string{"fsync", "synchronous_commit", "full_page_writes", "max_wal_size", "wal_init_zero", "shared_buffers"}

// Querier is what Read needs: a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Read reads the settings Advise needs from the server.
func Read(ctx context.Context, q Querier) (Settings, error) {
	rows, err := q.Query(ctx, `SELECT name, setting, coalesce(unit, ''), current_setting(name) FROM pg_settings WHERE name = ANY($1)`, names)
	if err != nil {
		return nil, fmt.Errorf("read server settings: %w", err)
	}
	out := Settings{}
	var name, raw, unit, shown string
	_, err = pgx.ForEachRow(rows, []any{&name, &raw, &unit, &shown}, func() error {
		out[name] = Setting{Value: shown, Bytes: bytesOf(raw, unit)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read server settings: %w", err)
	}
	return out, nil
}

// bytesOf is a size setting in bytes: raw counts units of unit ("8kB",
// "kB", "MB"). 0 when it is not a size.
func bytesOf(raw, unit string) int64 {
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || unit == "" {
		return 0
	}
	mult := int64(1)
	digits := strings.TrimRight(unit, "kMGTB")
	if digits != "" {
		m, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return 0
		}
		mult = m
	}
	switch strings.TrimPrefix(unit, digits) {
	case "B":
	case "kB":
		mult <<= 10
	case "MB":
		mult <<= 20
	case "GB":
		mult <<= 30
	default:
		return 0
	}
	return n * mult
}
