package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/github"
	"github.com/hookinbox/hookinbox/internal/procmem"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// BenchmarkProcessAllMirror is one processing batch of the shipped issue
// mirror, as a River worker's batch runs it (ProcessBatch, commit),
// without River: 40 GitHub issues deliveries about 40 issues, each newer
// than the last batch's. It reports the CPU each delivery costs this
// process and its PostgreSQL backend, which vary much less between runs
// on a shared machine than time does: a diagnosis of the processing path
// alone, not what a user's serve does (bench/README.md has that).
//
//	go test ./handlers -run '^$' -bench ProcessAllMirror -benchtime 400x
func BenchmarkProcessAllMirror(b *testing.B) {
	const batch = 40
	ctx := context.Background()
	pool := testdb.New(b)
	reg := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{{Name: "github", Provider: "github"}}})
	require.NoError(b, github.RegisterIssueMirror(reg))
	conn, err := pool.Acquire(ctx)
	require.NoError(b, err)
	defer conn.Release()
	var backend int
	require.NoError(b, conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend))

	pad := strings.Repeat("x", 3000)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var goCPU, pgCPU time.Duration
	b.ResetTimer()
	for i := range b.N {
		ds := make([]handlers.Delivery, batch)
		for j := range ds {
			updated := start.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
			ds[j] = handlers.Delivery{Source: "github", Provider: "github", EventType: "issues",
				DeliveryID: fmt.Sprintf("bench-%d-%d", i, j), ReceivedAt: time.Now(),
				Payload: fmt.Appendf(nil, `{"action":"edited","issue":{"number":%d,"title":"Issue %d","state":"open","updated_at":%q,"body":%q},"repository":{"full_name":"octo/repo-%d","id":%d}}`,
					1+j/32, j, updated, pad, j%32, j%32)}
		}
		goBefore, pgBefore := selfCPU(b), backendCPU(b, backend)
		tx, err := conn.Begin(ctx)
		require.NoError(b, err)
		_, errs, err := reg.ProcessBatch(ctx, tx, nil, ds)
		require.NoError(b, err)
		for _, err := range errs {
			require.NoError(b, err)
		}
		require.NoError(b, tx.Commit(ctx))
		goCPU += selfCPU(b) - goBefore
		pgCPU += backendCPU(b, backend) - pgBefore
	}
	b.StopTimer()
	var mirrored, versions int
	require.NoError(b, pool.QueryRow(ctx, "SELECT count(*) FROM github_issue_mirror").Scan(&mirrored))
	require.NoError(b, pool.QueryRow(ctx, "SELECT count(*) FROM resource_version").Scan(&versions))
	require.Equal(b, batch, mirrored, "every delivery applied")
	require.Equal(b, batch, versions)
	b.ReportMetric(float64(goCPU.Microseconds())/float64(b.N*batch), "go-µs/delivery")
	b.ReportMetric(float64(pgCPU.Microseconds())/float64(b.N*batch), "pg-µs/delivery")
}

// selfCPU is this process's user and system CPU so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU is a process's user and system CPU so far (in 10 ms ticks:
// read it over many batches).
func backendCPU(b *testing.B, pid int) time.Duration {
	d, err := procmem.CPU(pid, false)
	require.NoError(b, err)
	return d
}
