package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
)

// commitAfterRead runs hook once, right after the first statement that
// reads the delivery view ends: the moment a concurrent commit splits a
// reader that is not in one snapshot.
type commitAfterRead struct {
	armed atomic.Bool
	hook  func()
}

type tracedSQL struct{}

func (c *commitAfterRead) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, tracedSQL{}, data.SQL)
}

func (c *commitAfterRead) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	sql, _ := ctx.Value(tracedSQL{}).(string)
	if strings.Contains(sql, "FROM delivery\n") && c.armed.CompareAndSwap(true, false) {
		c.hook()
	}
}

// A delivery's detail is read in one snapshot: a job that completes
// between the server's statements shows either before (received, job
// waiting) or after (processed, job completed), never completed beside
// the old status. The console's delivery page stops following a delivery
// once no job is left to wait for; before this, it stopped at "failed"
// while the replay had processed it (CI, TestConsoleInChromium).
func TestGetDeliveryReadsOneSnapshot(t *testing.T) {
	t.Parallel()
	tracer := &commitAfterRead{}
	b := setupWith(t, setupOpts{noWorker: true, tracer: tracer})
	ctx := context.Background()
	id := b.deliver(t, "github", "gh-snapshot-1", "push", `{}`)
	tracer.hook = func() {
		// What processing_complete.sql commits: the job and the outcome
		// in one transaction.
		require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE river_job SET state = 'completed', attempt = 1, finalized_at = now()
				WHERE (args->>'inbox_id')::bigint = $1`, id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM inbox_pending WHERE inbox_id = $1`, id); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
				SELECT id, source, event_type, received_at, 'processed', now() FROM inbox WHERE id = $1`, id)
			return err
		}))
	}
	tracer.armed.Store(true)

	var d admin.DeliveryDetail
	b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", id), "", nil).json(t, &d)
	require.False(t, tracer.armed.Load(), "the hook ran")
	require.Len(t, d.Attempts, 1)
	require.Equal(t, "received", d.Status, "the snapshot from before the commit")
	require.Equal(t, "available", d.Attempts[0].State, "the job as of the status's snapshot")

	b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", id), "", nil).json(t, &d)
	require.Equal(t, "processed", d.Status)
	require.Equal(t, "completed", d.Attempts[0].State)
}
