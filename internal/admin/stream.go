package admin

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

// The bounds of GET /admin/deliveries/stream: a request holds a
// connection for at most MaxStreamWait and its answer at most
// MaxStreamLimit deliveries, whose bodies stop being added past
// streamPageBytes (the first is always there, whatever its size). At
// most maxStreams requests run at once (the rest get 429), so followers
// hold at most that many of the pool ingest and the workers share, and a
// page's answer, whose JSON may escape a body to six times its size, is
// held that many times at most. A scan walks at most streamScanIDs ids
// past the cursor: a follower of a rare source moves through a large
// inbox in windows, never reading it whole in one statement.
const (
	MaxStreamWait     = 25 * time.Second
	MaxStreamLimit    = 100
	MaxStreamSources  = 32
	MaxStreamEvents   = 32
	streamPageBytes   = 2 << 20
	streamScanRows    = 1000                   // rows a page's scan reads, before its filters
	streamScanIDs     = 100_000                // ids a page's scan walks at most, whatever its filters
	maxStreams        = 4                      // stream requests served at once, every token together
	streamPollEvery   = 100 * time.Millisecond // how often a waiting request looks for new ids
	streamSettleTime  = 2 * time.Second        // for the inserts in flight and the page's reads, beyond wait
	maxStreamParamLen = 255
)

// CodeStreamBusy answers a stream request over maxStreams (429).
const CodeStreamBusy = "stream_busy"

// StreamItem is one delivery of a stream page: what a follower needs to
// hand it on as it came.
type StreamItem struct {
	ID         int64               `json:"id"`
	Source     string              `json:"source"`
	DeliveryID string              `json:"delivery_id"`
	EventType  string              `json:"event_type"`
	ReceivedAt time.Time           `json:"received_at"`
	Headers    map[string][]string `json:"headers"`
	// Payload is the body as received: as text when it is UTF-8, else in
	// base64 with PayloadBase64 set.
	Payload       string `json:"payload"`
	PayloadBase64 bool   `json:"payload_base64"`
}

// Body returns the payload's bytes.
func (it StreamItem) Body() ([]byte, error) {
	if it.PayloadBase64 {
		return base64.StdEncoding.DecodeString(it.Payload)
	}
	return []byte(it.Payload), nil
}

// StreamPage is the answer of GET /admin/deliveries/stream.
type StreamPage struct {
	Items []StreamItem `json:"items"`
	// After is the next request's after: every delivery at or below it
	// that the filters select is in this page or an earlier one.
	After int64 `json:"after"`
}

// streamQuery is GET /admin/deliveries/stream's query.
type streamQuery struct {
	after   *int64     // the follower's cursor
	since   *time.Time // or: start at the first delivery received then
	sources []string
	events  []string // route event patterns (handlers.MatchEvent)
	wait    time.Duration
	limit   int
}

// streamDeliveries answers a follower (`hookinbox listen`): the
// deliveries after its cursor, in id order, as soon as there are any,
// else an empty page once wait has passed (a long poll). Without after or
// since, it answers at once with an empty page whose after is now: every
// delivery stored later has a greater id. The cursor never passes a
// delivery that could still commit (inbox.Settle).
func (s *Server) streamDeliveries(c *fiber.Ctx) error {
	q, err := parseStreamQuery(c, s.cfg.Sources)
	if err != nil {
		return err
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		c.Set(fiber.HeaderRetryAfter, "1")
		return &apiError{http.StatusTooManyRequests, CodeStreamBusy,
			fmt.Sprintf("%d streams are being served already; try again in a second", maxStreams)}
	}
	// wait is how long to wait for a delivery; settling the horizon and
	// reading the page get streamSettleTime more.
	ctx, cancel := context.WithTimeout(s.base, q.wait+streamSettleTime)
	defer cancel()
	if q.after == nil && q.since == nil {
		now, err := inbox.Settle(ctx, s.cfg.Pool)
		if err != nil {
			return streamError(err)
		}
		return c.JSON(StreamPage{Items: []StreamItem{}, After: now})
	}
	page, err := s.follow(ctx, q, time.Now().Add(q.wait))
	if err != nil {
		return streamError(err)
	}
	return c.JSON(page)
}

// streamError answers a wait cut short without a page (the server stops,
// or the inserts in flight outlast it) as the database being unavailable:
// the follower asks again.
func streamError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &apiError{http.StatusServiceUnavailable, CodeUnavailable, "inserts in flight did not end in time; retry"}
	}
	return err
}

// follow waits, until the time given, for deliveries after the cursor,
// and returns the first page of them; at that time, or when ctx ends, an
// empty page at the cursor as far as it got.
func (s *Server) follow(ctx context.Context, q streamQuery, until time.Time) (StreamPage, error) {
	after, err := s.startOf(ctx, q)
	if err != nil {
		return StreamPage{}, err
	}
	waited := StreamPage{Items: []StreamItem{}, After: after}
	for first := true; ; first = false {
		hw, err := inbox.HighWater(ctx, s.cfg.Pool)
		if err == nil && first && hw < waited.After {
			return StreamPage{}, &apiError{http.StatusBadRequest, CodeCursorAhead, fmt.Sprintf(
				"after %d is past every id this inbox has handed out (%d): a cursor from another database?", waited.After, hw)}
		}
		if err == nil && hw > waited.After {
			var page StreamPage
			if page, err = s.nextPage(ctx, q, waited.After); err == nil && len(page.Items) > 0 {
				return page, nil
			}
			waited.After = max(waited.After, page.After)
		}
		if err != nil && ctx.Err() == nil {
			return StreamPage{}, err
		}
		left := time.Until(until)
		if left <= 0 {
			return waited, nil
		}
		select {
		case <-ctx.Done():
			return waited, nil
		case <-time.After(min(left, streamPollEvery)):
		}
	}
}

// startOf is the cursor a request starts from: its after, or just below
// the first delivery received at or after its since, or, when none was,
// now.
func (s *Server) startOf(ctx context.Context, q streamQuery) (int64, error) {
	if q.after != nil {
		return *q.after, nil
	}
	first, ok, err := inbox.FirstSince(ctx, s.cfg.Pool, *q.since)
	if err != nil || ok {
		return first, err
	}
	return inbox.Settle(ctx, s.cfg.Pool)
}

// nextPage reads the page after the cursor up to a settled horizon. Its
// After is the horizon when the scan reached it, else the last row it
// decided on: rows the filters refuse move the cursor too, so a follower
// of a quiet source does not scan a busy one's rows twice.
func (s *Server) nextPage(ctx context.Context, q streamQuery, after int64) (StreamPage, error) {
	through, err := inbox.Settle(ctx, s.cfg.Pool)
	if err != nil {
		return StreamPage{}, err
	}
	through = min(through, after+streamScanIDs)
	rows, err := inbox.StreamScan(ctx, s.cfg.Pool, inbox.StreamFilter{After: after, Through: through,
		Sources: q.sources, Limit: streamScanRows})
	if err != nil {
		return StreamPage{}, err
	}
	type scanned struct {
		ID        int64
		Source    string
		EventType string
		Size      int
	}
	metas, err := pgx.CollectRows(rows, pgx.RowToStructByPos[scanned])
	if err != nil {
		return StreamPage{}, err
	}
	next := through
	if len(metas) == streamScanRows {
		next = metas[len(metas)-1].ID
	}
	var keep []int64
	bytes := 0
	for _, m := range metas {
		if !q.matches(m.EventType) {
			continue
		}
		if len(keep) == q.limit || len(keep) > 0 && bytes+m.Size > streamPageBytes {
			next = m.ID - 1 // every row before m is decided on
			break
		}
		keep, bytes = append(keep, m.ID), bytes+m.Size
	}
	items, err := s.loadItems(ctx, keep)
	return StreamPage{Items: items, After: next}, err
}

// loadItems reads the deliveries a page holds.
func (s *Server) loadItems(ctx context.Context, ids []int64) ([]StreamItem, error) {
	items := []StreamItem{}
	if len(ids) == 0 {
		return items, nil
	}
	rows, err := inbox.StreamLoad(ctx, s.cfg.Pool, ids)
	if err != nil {
		return nil, err
	}
	var (
		it      StreamItem
		payload []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&it.ID, &it.Source, &it.DeliveryID, &it.EventType, &it.ReceivedAt, &it.Headers, &payload},
		func() error {
			it.Payload, it.PayloadBase64 = encodePayload(payload)
			items = append(items, it)
			it.Headers = nil
			return nil
		})
	return items, err
}

// matches reports whether an event type is one the follower asked for.
func (q streamQuery) matches(eventType string) bool {
	if len(q.events) == 0 {
		return true
	}
	return slices.ContainsFunc(q.events, func(p string) bool { return handlers.MatchEvent(p, eventType) })
}

func parseStreamQuery(c *fiber.Ctx, known []string) (streamQuery, error) {
	q := streamQuery{wait: MaxStreamWait, limit: MaxStreamLimit}
	if v := c.Query("after"); v != "" {
		after, err := strconv.ParseInt(v, 10, 64)
		if err != nil || after < 0 {
			return q, errBadRequest("after must be an id (0 or more) a stream page returned")
		}
		q.after = &after
	}
	var err error
	if q.since, err = optionalTime(c.Query("since"), "since"); err != nil {
		return q, err
	}
	if q.after != nil && q.since != nil {
		return q, errBadRequest("give after or since, not both")
	}
	if v := c.Query("wait"); v != "" {
		if q.wait, err = time.ParseDuration(v); err != nil || q.wait < 0 || q.wait > MaxStreamWait {
			return q, errBadRequest(fmt.Sprintf("wait must be a duration from 0s to %s", MaxStreamWait))
		}
	}
	if v := c.Query("limit"); v != "" {
		if q.limit, err = strconv.Atoi(v); err != nil || q.limit < 1 || q.limit > MaxStreamLimit {
			return q, errBadRequest(fmt.Sprintf("limit must be 1 to %d", MaxStreamLimit))
		}
	}
	if q.sources, err = queryList(c, "source", MaxStreamSources); err != nil {
		return q, err
	}
	for _, src := range q.sources {
		if len(known) > 0 && !slices.Contains(known, src) {
			return q, errBadRequest(fmt.Sprintf("no source %q; sources: %s", src, strings.Join(known, ", ")))
		}
	}
	if q.events, err = queryList(c, "event", MaxStreamEvents); err != nil {
		return q, err
	}
	for _, e := range q.events {
		// The routes' syntax (destination's config check): "*", an exact
		// name, or a prefix "x.*".
		if e != handlers.AnyEvent && strings.Contains(strings.TrimSuffix(e, ".*"), "*") {
			return q, errBadRequest(fmt.Sprintf("event %q: an event is an exact name, \"*\", or a prefix such as \"invoice.*\"", e))
		}
	}
	return q, nil
}

// queryList reads a repeated query parameter, each value non-empty and
// short, at most max of them.
func queryList(c *fiber.Ctx, name string, max int) ([]string, error) {
	var out []string
	values := c.Context().QueryArgs().PeekMulti(name)
	if len(values) > max {
		return nil, errBadRequest(fmt.Sprintf("at most %d %s parameters", max, name))
	}
	for _, raw := range values {
		v := string(raw)
		if v == "" || len(v) > maxStreamParamLen {
			return nil, errBadRequest(fmt.Sprintf("%s must be 1 to %d bytes", name, maxStreamParamLen))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}
