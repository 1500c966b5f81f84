package inbox_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

type testBundle struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	ingest *ingest.Inbox
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := testdb.New(t)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	return &testBundle{ctx: context.Background(), pool: pool, ingest: ingest.NewInbox(pool, rc)}
}

// deliver records a delivery as ingest does, and returns its inbox id.
func (b *testBundle) deliver(t *testing.T, source, deliveryID, eventType, payload string) int64 {
	t.Helper()
	rec, err := b.ingest.Record(b.ctx, ingest.Delivery{Source: source, DeliveryID: deliveryID, EventType: eventType,
		Headers: http.Header{"Content-Type": {"application/json"}}, Payload: []byte(payload)})
	require.NoError(t, err)
	return rec.ID
}

// listed is a row of List, in its documented columns.
type listed struct {
	ID                            int64
	Source, DeliveryID, EventType string
	Status, Origin                string
	ResourceKey                   *string
	Stale                         *bool
	OccurredAt                    *time.Time
	ReceivedAt                    time.Time
	ProcessedAt                   *time.Time
	LastError                     *string
	Size                          int
}

func (b *testBundle) list(t *testing.T, f inbox.ListFilter) []int64 {
	t.Helper()
	rows, err := inbox.List(b.ctx, b.pool, f)
	require.NoError(t, err)
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[listed])
	require.NoError(t, err)
	ids := []int64{}
	for _, d := range items {
		ids = append(ids, d.ID)
	}
	return ids
}

func ptr[T any](v T) *T { return &v }

// Each filter's statement selects the same deliveries the filter names.
func TestList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.deliver(t, "github", "gh-1", "push", `{"a":1}`)
	c := b.deliver(t, "github", "gh-2", "issues", `{}`)
	d := b.deliver(t, "stripe", "st-1", "charge.succeeded", `{}`)
	testdb.SetStatus(t, b.pool, "failed", c)
	testdb.SetStatus(t, b.pool, "processed", d)
	_, err := b.pool.Exec(b.ctx, "UPDATE inbox_outcome SET resource_key = 'ch_1' WHERE inbox_id = $1", d)
	require.NoError(t, err)

	require.Equal(t, []int64{d, c, a}, b.list(t, inbox.ListFilter{Limit: 10}))
	require.Equal(t, []int64{d}, b.list(t, inbox.ListFilter{Limit: 1}))
	require.Equal(t, []int64{c, a}, b.list(t, inbox.ListFilter{Cursor: &d, Limit: 10}))
	require.Equal(t, []int64{d}, b.list(t, inbox.ListFilter{After: &c, Limit: 10}))
	require.Equal(t, []int64{c, a}, b.list(t, inbox.ListFilter{Source: ptr("github"), Limit: 10}))
	require.Equal(t, []int64{c}, b.list(t, inbox.ListFilter{EventType: ptr("issues"), Limit: 10}))
	require.Equal(t, []int64{a}, b.list(t, inbox.ListFilter{Status: ptr("received"), Limit: 10}))
	require.Equal(t, []int64{c}, b.list(t, inbox.ListFilter{Status: ptr("failed"), Limit: 10}))
	require.Equal(t, []int64{d}, b.list(t, inbox.ListFilter{Status: ptr("processed"), Limit: 10}))
	require.Equal(t, []int64{d}, b.list(t, inbox.ListFilter{Resource: ptr("ch_1"), Limit: 10}))
	require.Empty(t, b.list(t, inbox.ListFilter{FailedSends: true, Limit: 10}), "no send failed")

	future := time.Now().Add(time.Hour)
	require.Equal(t, []int64{d, c, a}, b.list(t, inbox.ListFilter{Until: &future, Limit: 10}))
	rows, err := inbox.List(b.ctx, b.pool, inbox.ListFilter{Until: &future, Limit: 1})
	require.NoError(t, err)
	first, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[listed])
	require.NoError(t, err)
	require.Equal(t, []int64{c, a}, b.list(t, inbox.ListFilter{Until: &future, Cursor: &first.ID, CursorAt: &first.ReceivedAt, Limit: 10}))
}

func TestGetExistsStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-1", "push", `{"a":1}`)

	var (
		d       listed
		headers map[string][]string
		payload []byte
		sum     []byte
	)
	require.NoError(t, inbox.Get(b.ctx, b.pool, id).Scan(&d.ID, &d.Source, &d.DeliveryID, &d.EventType, &d.Status, &d.Origin,
		&d.ResourceKey, &d.Stale, &d.OccurredAt, &d.ReceivedAt, &d.ProcessedAt, &d.LastError, &d.Size, &headers, &payload, &sum))
	require.Equal(t, "gh-1", d.DeliveryID)
	require.Equal(t, "received", d.Status)
	require.Equal(t, len(`{"a":1}`), d.Size)
	require.Equal(t, `{"a":1}`, string(payload))
	require.Equal(t, []string{"application/json"}, headers["Content-Type"])
	require.ErrorIs(t, inbox.Get(b.ctx, b.pool, id+1).Scan(&d.ID), pgx.ErrNoRows)

	exists, err := inbox.Exists(b.ctx, b.pool, id)
	require.NoError(t, err)
	require.True(t, exists)
	exists, err = inbox.Exists(b.ctx, b.pool, id+1)
	require.NoError(t, err)
	require.False(t, exists)

	testdb.SetStatus(t, b.pool, "failed", id)
	_, err = b.pool.Exec(b.ctx, "UPDATE inbox_outcome SET last_error = 'boom' WHERE inbox_id = $1", id)
	require.NoError(t, err)
	status, lastError, err := inbox.Status(b.ctx, b.pool, id)
	require.NoError(t, err)
	require.Equal(t, "failed", status)
	require.Equal(t, "boom", *lastError)
	_, _, err = inbox.Status(b.ctx, b.pool, id+1)
	require.ErrorIs(t, err, pgx.ErrNoRows)
}

func TestKnownDeliveryIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.deliver(t, "github", "gh-1", "push", `{}`)
	b.deliver(t, "stripe", "gh-2", "push", `{}`)

	known, err := inbox.KnownDeliveryIDs(b.ctx, b.pool, "github", []string{"gh-1", "gh-2", "gh-3"})
	require.NoError(t, err)
	require.Equal(t, []string{"gh-1"}, known, "gh-2 is another source's")
}

func TestCountByStatusAndOldestPending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	age, err := inbox.OldestPendingSeconds(b.ctx, b.pool)
	require.NoError(t, err)
	require.Zero(t, age, "nothing waits")

	ids := make([]int64, 5)
	for i := range ids {
		ids[i] = b.deliver(t, "github", "d-"+string(rune('a'+i)), "push", `{}`)
	}
	testdb.SetStatus(t, b.pool, "processed", ids[0], ids[1])
	testdb.SetStatus(t, b.pool, "failed", ids[2])

	counts := map[string][2]float64{}
	rows, err := inbox.CountByStatus(b.ctx, b.pool, 1)
	require.NoError(t, err)
	var (
		status       string
		n, estimated float64
	)
	_, err = pgx.ForEachRow(rows, []any{&status, &n, &estimated}, func() error {
		counts[status] = [2]float64{n, estimated}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, [2]float64{2, 0}, counts["received"])
	require.Equal(t, [2]float64{1, 0}, counts["failed"])
	require.Equal(t, [2]float64{0, 0}, counts["skipped"])
	require.Equal(t, float64(1), counts["processed"][1], "past the exact limit of 1: estimated")
	require.GreaterOrEqual(t, counts["processed"][0], float64(2))

	age, err = inbox.OldestPendingSeconds(b.ctx, b.pool)
	require.NoError(t, err)
	require.Positive(t, age)
}

func TestBacklogAndCountSelected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := make([]int64, 5)
	for i := range ids {
		ids[i] = b.deliver(t, []string{"github", "stripe"}[i%2], "d-"+string(rune('a'+i)), "push", `{}`)
	}
	testdb.SetStatus(t, b.pool, "processed", ids[0], ids[1])
	testdb.SetStatus(t, b.pool, "failed", ids[2])

	backlog := map[string]int64{}
	rows, err := inbox.Backlog(b.ctx, b.pool)
	require.NoError(t, err)
	var (
		source, status string
		count          int64
		oldest         time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&source, &status, &count, &oldest}, func() error {
		backlog[source+" "+status] = count
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"stripe received": 1, "github received": 1, "github failed": 1}, backlog)

	for _, c := range []struct {
		s     inbox.Selection
		limit int64
		want  int64
	}{
		{inbox.Selection{}, 100, 5},
		{inbox.Selection{}, 3, 3},
		{inbox.Selection{Status: ptr("received")}, 100, 2},
		{inbox.Selection{Status: ptr("processed")}, 100, 2},
		{inbox.Selection{Source: ptr("github"), Status: ptr("failed")}, 100, 1},
		{inbox.Selection{EventType: ptr("issues")}, 100, 0},
		{inbox.Selection{Since: ptr(time.Now().Add(time.Hour))}, 100, 0},
		{inbox.Selection{Until: ptr(time.Now().Add(time.Hour))}, 100, 5},
	} {
		n, err := inbox.CountSelected(b.ctx, b.pool, c.s, c.limit)
		require.NoError(t, err)
		require.Equal(t, c.want, n, "%+v up to %d", c.s, c.limit)
	}
}

func TestConflicts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	stored := b.deliver(t, "github", "gh-1", "push", `{"a":1}`)
	conflict := ingest.Delivery{Source: "github", DeliveryID: "gh-1", EventType: "push",
		Headers: http.Header{"X-Test": {"1"}}, Payload: []byte(`{"a":2}`)}
	require.NoError(t, b.ingest.RecordConflict(b.ctx, conflict, stored))

	rows, err := inbox.ListConflicts(b.ctx, b.pool, nil, 10)
	require.NoError(t, err)
	type row struct {
		ID                 int64
		Source, DeliveryID string
		InboxID            *int64
		ReceivedAt         time.Time
		SHA256             []byte
		Size               int
		StoredSHA          []byte
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, stored, *list[0].InboxID)
	require.Equal(t, len(`{"a":2}`), list[0].Size)

	rows, err = inbox.ListConflicts(b.ctx, b.pool, &list[0].ID, 10)
	require.NoError(t, err)
	rest, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	require.Empty(t, rest, "older than the only one")

	var (
		r          row
		headers    map[string][]string
		body       []byte
		storedID   *int64
		storedAt   *time.Time
		storedBody []byte
		storedSize *int
	)
	require.NoError(t, inbox.GetConflict(b.ctx, b.pool, list[0].ID, 3).Scan(&r.ID, &r.Source, &r.DeliveryID, &r.ReceivedAt,
		&r.SHA256, &headers, &body, &r.Size, &storedID, &storedAt, &r.StoredSHA, &storedBody, &storedSize))
	require.Equal(t, `{"a":2}`, string(body))
	require.Equal(t, []string{"1"}, headers["X-Test"])
	require.Equal(t, stored, *storedID)
	require.Equal(t, `{"a`, string(storedBody), "the stored payload up to the cap")
	require.Equal(t, len(`{"a":1}`), *storedSize)
	require.ErrorIs(t, inbox.GetConflict(b.ctx, b.pool, list[0].ID+1, 3).Scan(&r.ID), pgx.ErrNoRows)
}
