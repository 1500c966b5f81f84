package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
)

// stream asks GET /admin/deliveries/stream with query q and returns its page.
func (b *testBundle) stream(t *testing.T, q string) admin.StreamPage {
	t.Helper()
	r := b.do(t, http.MethodGet, "/admin/deliveries/stream?"+q, "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s: %s", q, r.body)
	var p admin.StreamPage
	r.json(t, &p)
	return p
}

func streamIDs(p admin.StreamPage) []int64 {
	ids := []int64{}
	for _, it := range p.Items {
		ids = append(ids, it.ID)
	}
	return ids
}

// A follower gets its sources' deliveries in id order, each body byte for
// byte (base64 when it is not UTF-8) with its headers, and pages that
// give each delivery once.
func TestStreamFollowsInIDOrder(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	first := b.deliver(t, "github", "gh-stream-1", "push", `{"n": 1}`)
	b.deliver(t, "stripe", "evt_stream_1", "invoice.paid", `{}`)
	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{Source: "github", DeliveryID: "gh-stream-2",
		EventType: "issues", Headers: http.Header{"X-Github-Event": {"issues"}}, Payload: []byte("\xff\xfe{}")})
	require.NoError(t, err)

	p := b.stream(t, "after=0&source=github&wait=0s")
	require.Equal(t, []int64{first, rec.ID}, streamIDs(p))
	require.GreaterOrEqual(t, p.After, rec.ID)
	require.Equal(t, `{"n": 1}`, p.Items[0].Payload)
	require.Equal(t, "gh-stream-1", p.Items[0].Headers["X-Github-Delivery"][0])
	require.Equal(t, "push", p.Items[0].EventType)
	body, err := p.Items[1].Body()
	require.NoError(t, err)
	require.True(t, p.Items[1].PayloadBase64)
	require.Equal(t, []byte("\xff\xfe{}"), body)
	require.Equal(t, []string{"issues"}, p.Items[1].Headers["X-Github-Event"])

	require.Empty(t, b.stream(t, fmt.Sprintf("after=%d&source=github&wait=0s", p.After)).Items)

	// One a page: every delivery once, in order.
	var got []int64
	for after, pages := int64(0), 0; pages < 10; pages++ {
		p := b.stream(t, fmt.Sprintf("after=%d&limit=1&wait=0s", after))
		if len(p.Items) == 0 {
			break
		}
		got = append(got, streamIDs(p)...)
		after = p.After
	}
	require.Len(t, got, 3)
	require.IsIncreasing(t, got)
}

// Without after or since, the answer is now: a delivery stored before is
// not in the stream, one stored after is, and a waiting request answers
// with it.
func TestStreamFromNowAndLongPoll(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	before := b.deliver(t, "github", "gh-now-1", "push", `{}`)
	now := b.stream(t, "")
	require.Empty(t, now.Items)
	require.Equal(t, before, now.After)

	answer := make(chan admin.StreamPage, 1)
	go func() { answer <- b.stream(t, fmt.Sprintf("after=%d&wait=20s", now.After)) }()
	after := b.deliver(t, "github", "gh-now-2", "push", `{}`)
	require.Equal(t, []int64{after}, streamIDs(<-answer))
}

// Ids are taken at insert, but transactions commit in their own order: a
// delivery that took a lower id and commits later must not be passed by
// the cursor. While it is in flight the stream hands out nothing after
// it; once it commits, both come, in id order.
func TestStreamWaitsForAnInsertInFlight(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	ctx := context.Background()
	tx, err := b.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	late, err := b.inbox.RecordTx(ctx, tx, ingest.Delivery{Source: "github", DeliveryID: "gh-late",
		EventType: "push", Headers: http.Header{}, Payload: []byte(`{}`)})
	require.NoError(t, err)
	early := b.deliver(t, "github", "gh-early", "push", `{}`)
	require.Greater(t, early, late.ID)

	p := b.stream(t, "after=0&wait=300ms")
	require.Empty(t, p.Items, "the stream passed delivery %d, still in flight", late.ID)
	require.Less(t, p.After, late.ID)

	require.NoError(t, tx.Commit(ctx))
	p = b.stream(t, fmt.Sprintf("after=%d&wait=10s", p.After))
	require.Equal(t, []int64{late.ID, early}, streamIDs(p))
}

// Events are filtered with the routes' syntax; a pattern the routes
// refuse is refused here too.
func TestStreamFiltersEvents(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	paid := b.deliver(t, "stripe", "evt_f1", "invoice.paid", `{}`)
	b.deliver(t, "stripe", "evt_f2", "customer.created", `{}`)
	invoice := b.deliver(t, "stripe", "evt_f3", "invoice", `{}`)
	b.deliver(t, "github", "gh-f1", "invoice.paid", `{}`)

	p := b.stream(t, "after=0&wait=0s&source=stripe&event=invoice.*")
	require.Equal(t, []int64{paid, invoice}, streamIDs(p))
	p = b.stream(t, "after=0&wait=0s&source=stripe&event=customer.created&event=invoice")
	require.Len(t, p.Items, 2)

	r := b.do(t, http.MethodGet, "/admin/deliveries/stream?after=0&event=invoice*", "", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
}

// since starts at the first delivery received then.
func TestStreamSince(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	old := b.deliver(t, "github", "gh-s1", "push", `{}`)
	_, err := b.pool.Exec(context.Background(), "UPDATE inbox SET received_at = now() - interval '1 hour' WHERE id = $1", old)
	require.NoError(t, err)
	recent := b.deliver(t, "github", "gh-s2", "push", `{}`)

	since := url.QueryEscape(time.Now().Add(-30 * time.Minute).Format(time.RFC3339))
	require.Equal(t, []int64{recent}, streamIDs(b.stream(t, "wait=0s&since="+since)))
	// None since: the stream starts now.
	since = url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	p := b.stream(t, "wait=0s&since="+since)
	require.Empty(t, p.Items)
	require.Equal(t, recent, p.After)
}

// Everything a request can make the server hold is bounded.
func TestStreamBounds(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	id := b.deliver(t, "github", "gh-b1", "push", `{}`)
	many := strings.Repeat("&event=e", admin.MaxStreamEvents) + "&event=f"
	for _, q := range []string{
		"after=0&limit=101", "after=0&limit=0", "after=0&wait=26s", "after=0&wait=-1s", "after=-1", "after=x",
		"after=0&since=2026-01-01T00:00:00Z", "after=0&source=nope", "after=0" + many,
		"after=0&source=" + strings.Repeat("g", 256),
	} {
		r := b.do(t, http.MethodGet, "/admin/deliveries/stream?"+q, "", nil)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", q, r.body)
	}
	r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/stream?after=%d", id+1000), "", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	require.Equal(t, admin.CodeCursorAhead, r.errorCode(t))

	// A page stops adding bodies past its byte budget, the first aside.
	big := strings.Repeat("x", 5<<20)
	first := b.deliver(t, "github", "gh-big-1", "push", big)
	second := b.deliver(t, "github", "gh-big-2", "push", big)
	p := b.stream(t, fmt.Sprintf("after=%d&wait=0s", id))
	require.Equal(t, []int64{first}, streamIDs(p))
	require.Equal(t, []int64{second}, streamIDs(b.stream(t, fmt.Sprintf("after=%d&wait=0s", p.After))))
}

// A read token cannot hold more of the shared pool than maxStreams
// waiting requests: the next is told to come back.
func TestStreamsServedAtOnceAreBounded(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	now := b.stream(t, "")
	var wg sync.WaitGroup
	// Four waiters, each trying again while the probe below holds a slot.
	for range 4 {
		wg.Go(func() {
			for {
				r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/stream?after=%d&wait=3s", now.After), "", nil)
				if r.status != http.StatusTooManyRequests {
					if r.status != http.StatusOK {
						t.Errorf("a waiter: %d %s", r.status, r.body)
					}
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	require.Eventually(t, func() bool {
		r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/stream?after=%d&wait=0s", now.After), "", nil)
		return r.status == http.StatusTooManyRequests && r.errorCode(t) == admin.CodeStreamBusy && r.header.Get("Retry-After") == "1"
	}, 2*time.Second, 20*time.Millisecond, "a fifth stream is served while four wait")
	wg.Wait()
	require.Empty(t, b.stream(t, fmt.Sprintf("after=%d&wait=0s", now.After)).Items, "served again once they are done")
}

// A follower of a rare source moves through the ids in windows: one
// page's scan never walks the whole inbox, and no delivery is passed.
func TestStreamScansAWindowOfIDs(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	b.deliver(t, "github", "gh-w1", "push", `{}`)
	_, err := b.pool.Exec(context.Background(), `SELECT setval('inbox_id_seq', nextval('inbox_id_seq') + 250000)`)
	require.NoError(t, err)
	rare := b.deliver(t, "stripe", "evt_w1", "invoice.paid", `{}`)
	p := admin.StreamPage{}
	var pages int
	for ; len(p.Items) == 0; pages++ {
		before := p.After
		p = b.stream(t, fmt.Sprintf("after=%d&source=stripe&wait=0s", before))
		require.LessOrEqual(t, p.After-before, int64(100_000), "a page walks at most a window of ids")
		require.Less(t, pages, 10)
	}
	require.Equal(t, []int64{rare}, streamIDs(p))
	require.GreaterOrEqual(t, pages, 3, "the rare delivery is more than two windows past the cursor")
}
