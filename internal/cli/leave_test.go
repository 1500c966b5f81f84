package cli

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// serve has a row of its own among the worker processes while it runs,
// and deletes it once its workers have stopped: a process of a newer
// configuration starting after it does not wait for its looks, nor for it
// to go silent (jobs.Generation's Leave).
func TestServeLeavesOnceItsWorkersStop(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	exited := make(chan int, 1)
	go func() { exited <- run(ctx, []string{"serve", "--config", b.configPath}, b.env) }()
	b.waitReady(t, exited)

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	processes := func() int {
		var n int
		require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM worker_process").Scan(&n))
		return n
	}
	require.Equal(t, 1, processes(), "serve runs")
	cancel()
	select {
	case code := <-exited:
		require.Zero(t, code, "log:\n%s", b.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop; log:\n%s", b.stderr)
	}
	require.Zero(t, processes(), "serve left")
}
