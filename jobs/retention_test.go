package jobs_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

type retentionBundle struct {
	pool  *pgxpool.Pool
	inbox *ingest.Inbox
	now   time.Time
}

func setupRetention(t *testing.T) *retentionBundle {
	t.Helper()
	pool := testdb.New(t)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	return &retentionBundle{pool: pool, inbox: ingest.NewInbox(pool, rc), now: time.Now()}
}

// row stores a delivery received age ago with the given status.
func (b *retentionBundle) row(t *testing.T, source, id, status string, age time.Duration) int64 {
	t.Helper()
	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: source, DeliveryID: id, EventType: "push", Headers: http.Header{}, Payload: []byte(`{"n":"` + id + `"}`),
	})
	require.NoError(t, err)
	_, err = b.pool.Exec(context.Background(), "UPDATE inbox SET received_at = $2 WHERE id = $1", rec.ID, b.now.Add(-age))
	require.NoError(t, err)
	testdb.SetStatus(t, b.pool, status, rec.ID)
	if status != "received" {
		// Handled: its processing job ran to the end.
		_, err = b.pool.Exec(context.Background(), "UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1", rec.JobID)
		require.NoError(t, err)
	}
	return rec.ID
}

func (b *retentionBundle) remaining(t *testing.T) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT delivery_id FROM inbox ORDER BY delivery_id")
	require.NoError(t, err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	return ids
}

const day = 24 * time.Hour

func TestRetentionDeletesOnlyExpiredHandledRows(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	b.row(t, "github", "gh-old-processed", "processed", 31*day)
	b.row(t, "github", "gh-old-skipped", "skipped", 40*day)
	b.row(t, "github", "gh-old-failed", "failed", 40*day)     // given up on: kept, counted
	b.row(t, "github", "gh-old-received", "received", 40*day) // not handled yet: kept, counted
	b.row(t, "github", "gh-young", "processed", 29*day)
	b.row(t, "stripe", "st-10d", "processed", 10*day) // stripe keeps 7 days
	b.row(t, "stripe", "st-5d", "processed", 5*day)
	b.row(t, "gone", "gone-35d", "processed", 35*day) // unconfigured source: the longest retention
	b.row(t, "gone", "gone-20d", "processed", 20*day)
	_, err := b.pool.Exec(context.Background(), `INSERT INTO api_idempotency (scope, operation, idempotency_key, request_hash, state, created_at, expires_at)
		VALUES ('s', 'op', 'old', '\x00', 'completed', now() - interval '8 days', now() - interval '7 days'),
		       ('s', 'op', 'new', '\x00', 'completed', now() - interval '1 day', now())`)
	require.NoError(t, err)

	logger, _ := testlog.New(t)
	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{
		Inbox:           map[string]time.Duration{"github": 30 * day, "stripe": 7 * day},
		IdempotencyKeys: 7 * day,
		BatchSize:       2, // several batches per group
		Pause:           time.Millisecond,
	}, time.Minute, logger)
	res, err := w.Run(context.Background(), b.now)
	require.NoError(t, err)
	require.Equal(t, jobs.RetentionResult{InboxDeleted: 4, InboxHeld: 2, KeysDeleted: 1}, res)
	require.Equal(t, []string{"gh-old-failed", "gh-old-received", "gh-young", "gone-20d", "st-5d"}, b.remaining(t))
	var keys int
	require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT count(*) FROM api_idempotency").Scan(&keys))
	require.Equal(t, 1, keys)

	// Their jobs are River's to prune; a second pass finds nothing.
	res, err = w.Run(context.Background(), b.now)
	require.NoError(t, err)
	require.Equal(t, jobs.RetentionResult{InboxHeld: 2}, res)
}

// The documented consequence: once a delivery's row is deleted, a late
// resend of it is accepted as new.
func TestRetentionLateResendIsNew(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	first := b.row(t, "github", "gh-late", "processed", 31*day)
	logger, _ := testlog.New(t)
	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{Inbox: map[string]time.Duration{"github": 30 * day}, IdempotencyKeys: day}, time.Minute, logger)
	_, err := w.Run(context.Background(), b.now)
	require.NoError(t, err)

	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: "github", DeliveryID: "gh-late", EventType: "push", Headers: http.Header{}, Payload: []byte(`{"n":"gh-late"}`),
	})
	require.NoError(t, err)
	require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
	require.NotEqual(t, first, rec.ID, fmt.Sprintf("a new row, not row %d", first))
}

// A handled row with a replay still queued is kept until the replay has
// run: deleting it would cancel the replay for want of its row.
func TestRetentionHoldsARowWithAQueuedReplay(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	id := b.row(t, "github", "gh-replayed", "processed", 31*day)
	rc, err := jobs.NewClient(b.pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = jobs.ReplayTx(ctx, tx, rc, []int64{id}, nil)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))

	w := jobs.NewRetentionWorker(b.pool, jobs.RetentionConfig{Inbox: map[string]time.Duration{"github": 30 * day}, IdempotencyKeys: day}, time.Minute, nil)
	res, err := w.Run(ctx, b.now)
	require.NoError(t, err)
	require.Equal(t, jobs.RetentionResult{InboxHeld: 1}, res)
	require.Equal(t, []string{"gh-replayed"}, b.remaining(t))
}

// fixedClock is River's clock, set by the test.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time       { return c.now }
func (c *fixedClock) NowOrNil() *time.Time { return &c.now }

// A pass that lives (running, or snoozed between slices of its work)
// keeps every later tick from adding another, however many periods
// later: two passes at once would each delete a dropped partition's keys
// at its pace. Once it is done, the next tick adds one.
func TestRetentionPassIsUniqueWhileItLives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	clock := &fixedClock{now: time.Now()}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Test: river.TestConfig{Time: clock}})
	require.NoError(t, err)
	insert := func() bool {
		t.Helper()
		res, err := client.Insert(ctx, jobs.RetentionArgs{}, jobs.RetentionInsertOpts())
		require.NoError(t, err)
		return !res.UniqueSkippedAsDuplicate
	}
	require.True(t, insert())
	_, err = pool.Exec(ctx, "UPDATE river_job SET state = 'scheduled', scheduled_at = now() + interval '1 second'")
	require.NoError(t, err)
	clock.now = clock.now.Add(3 * time.Hour)
	require.False(t, insert(), "snoozed three hours into its work")
	_, err = pool.Exec(ctx, "UPDATE river_job SET state = 'completed', finalized_at = now()")
	require.NoError(t, err)
	require.True(t, insert())
}
