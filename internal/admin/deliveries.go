package admin

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// MaxListLimit bounds one page of GET /admin/deliveries.
const (
	MaxListLimit     = 500
	DefaultListLimit = 50
)

// Delivery is an inbox row in a listing.
type Delivery struct {
	ID          int64   `json:"id"`
	Source      string  `json:"source"`
	DeliveryID  string  `json:"delivery_id"`
	EventType   string  `json:"event_type"`
	Status      string  `json:"status"`
	Origin      string  `json:"origin"`
	ResourceKey *string `json:"resource"`
	// Stale: the handlers found a newer event of the resource already
	// applied when they processed it. Null before processing, or when the
	// delivery names no resource.
	Stale       *bool      `json:"stale"`
	OccurredAt  *time.Time `json:"occurred_at"`
	ReceivedAt  time.Time  `json:"received_at"`
	ProcessedAt *time.Time `json:"processed_at"`
	LastError   *string    `json:"last_error"`
	Size        int        `json:"size"`
	// FailedSends are the delivery's sends that failed for good, each
	// with its destination and error: a delivery whose handlers ran
	// (processed) may still have a destination that got nothing.
	FailedSends []destination.FailedSend `json:"failed_sends" db:"-"`
}

type deliveryPage struct {
	Items      []Delivery `json:"items"`
	NextCursor *string    `json:"next_cursor"`
}

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	_, page, err := s.listPage(c)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

// listPage reads the page the request's filter asks for.
func (s *Server) listPage(c *fiber.Ctx) (deliveryFilter, deliveryPage, error) {
	f, err := parseDeliveryFilter(c)
	if err != nil {
		return f, deliveryPage{}, err
	}
	page, err := s.queryDeliveries(c.UserContext(), f)
	return f, page, err
}

// deliveryFilter is GET /admin/deliveries's query, which the console's
// list takes too (its URLs are the API's filters).
type deliveryFilter struct {
	Source, Status, EventType, Resource string
	// SendStatus "failed": only deliveries with a failed send (to
	// Destination, when given).
	SendStatus, Destination string
	Since, Until            string // as given: RFC 3339
	Limit                   int
	since, until            *time.Time
	cursor                  *int64     // older than this id (with until: than this time and id)
	cursorAt                *time.Time // with until: the cursor's received_at
	after                   *int64     // newer than this id (the console's poll)
}

func parseDeliveryFilter(c *fiber.Ctx) (deliveryFilter, error) {
	f := deliveryFilter{Source: c.Query("source"), Status: c.Query("status"), EventType: c.Query("event_type"),
		Resource: c.Query("resource"), SendStatus: c.Query("send_status"), Destination: c.Query("destination"),
		Since: c.Query("since"), Until: c.Query("until"), Limit: DefaultListLimit}
	if err := checkStatus(f.Status); err != nil {
		return f, err
	}
	if f.SendStatus != "" && f.SendStatus != "failed" {
		return f, errBadRequest("send_status must be failed")
	}
	if f.Destination != "" && f.SendStatus == "" {
		return f, errBadRequest("destination names the failed sends to list: give send_status=failed with it")
	}
	var err error
	if f.since, err = optionalTime(f.Since, "since"); err != nil {
		return f, err
	}
	if f.until, err = optionalTime(f.Until, "until"); err != nil {
		return f, err
	}
	if q := c.Query("limit"); q != "" {
		if f.Limit, err = strconv.Atoi(q); err != nil || f.Limit < 1 || f.Limit > MaxListLimit {
			return f, errBadRequest(fmt.Sprintf("limit must be 1 to %d", MaxListLimit))
		}
	}
	if q := c.Query("cursor"); q != "" {
		var (
			id int64
			at time.Time
		)
		if !f.byTime() {
			id, err = decodeCursor(q)
		} else {
			at, id, err = decodeTimeCursor(q)
			f.cursorAt = &at
		}
		if err != nil {
			return f, errBadRequest("cursor is not one this API returned (with these filters)")
		}
		f.cursor = &id
	}
	return f, nil
}

// byTime reports whether the list is ordered by received_at (a window
// back in time) rather than by id.
func (f deliveryFilter) byTime() bool { return f.until != nil && f.SendStatus == "" }

// queryDeliveries reads one page, newest first, with each delivery's
// failed sends.
func (s *Server) queryDeliveries(ctx context.Context, f deliveryFilter) (deliveryPage, error) {
	rows, err := inbox.List(ctx, s.cfg.Pool, inbox.ListFilter{Source: optional(f.Source), Status: optional(f.Status),
		EventType: optional(f.EventType), Resource: optional(f.Resource), Since: f.since, Until: f.until,
		FailedSends: f.SendStatus == "failed", Destination: optional(f.Destination),
		Cursor: f.cursor, CursorAt: f.cursorAt, After: f.after,
		Limit: f.Limit + 1}) // one more tells whether a next page exists
	if err != nil {
		return deliveryPage{}, err
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Delivery])
	if err != nil {
		return deliveryPage{}, err
	}
	page := deliveryPage{Items: items}
	if len(items) > f.Limit {
		page.Items = items[:f.Limit]
		last := page.Items[f.Limit-1]
		next := encodeCursor(last.ID)
		if f.byTime() {
			next = encodeTimeCursor(last.ReceivedAt, last.ID)
		}
		page.NextCursor = &next
	}
	if page.Items == nil {
		page.Items = []Delivery{}
	}
	keys := make([]destination.DeliveryKey, len(page.Items))
	for i, d := range page.Items {
		keys[i] = destination.DeliveryKey{Source: d.Source, DeliveryID: d.DeliveryID}
	}
	failed, err := destination.FailedSendsOf(ctx, s.cfg.Pool, keys)
	if err != nil {
		return deliveryPage{}, err
	}
	for i := range page.Items {
		page.Items[i].FailedSends = failed[keys[i]]
		if page.Items[i].FailedSends == nil {
			page.Items[i].FailedSends = []destination.FailedSend{}
		}
	}
	return page, nil
}

// DeliveryDetail is one delivery with everything known about its processing.
type DeliveryDetail struct {
	Delivery
	Headers       map[string][]string `json:"headers"`
	Payload       string              `json:"payload"`
	PayloadBase64 bool                `json:"payload_base64"` // true when the payload is not UTF-8 and is given in base64
	SHA256        string              `json:"sha256"`
	Attempts      []Attempt           `json:"attempts"`
	Keys          []DerivedKey        `json:"downstream_keys"`
	// Destinations is what each destination got: its send and attempts.
	Destinations []destination.Send `json:"destinations"`
	// Routes is what the routes' filters, as configured now, make of the
	// delivery for each destination its event type is routed to. Reading
	// a delivery runs no transform: what one made of it is in
	// Destinations, recorded when the send was made.
	Routes []RouteDecision `json:"routes"`
}

// RouteDecision is the routes' verdict on a delivery for one destination.
type RouteDecision struct {
	Destination string `json:"destination"`
	// Route is the index of the route that decided; null when every
	// route's filter refused the delivery.
	Route *int `json:"route"`
	// Outcome is "sends" (the filter selects it), "filtered_out" or
	// "error" (the filter failed to evaluate).
	Outcome string  `json:"outcome"`
	Error   *string `json:"error"`
}

// routeDecisions evaluates the routes' filters over a stored delivery.
func routeDecisions(dests *destination.Service, d DeliveryDetail, payload []byte) []RouteDecision {
	out := []RouteDecision{}
	if dests == nil {
		return out
	}
	in := destination.ExprInput{Source: d.Source, EventType: d.EventType, DeliveryID: d.DeliveryID, ReceivedAt: d.ReceivedAt,
		Header: http.Header(d.Headers), Body: payload, ContentType: http.Header(d.Headers).Get("Content-Type")}
	if d.ResourceKey != nil {
		in.Resource = *d.ResourceKey
	}
	for _, r := range dests.Explain(in) {
		rd := RouteDecision{Destination: r.Destination, Outcome: "sends"}
		if r.Route >= 0 {
			rd.Route = &r.Route
		}
		switch {
		case r.Err != nil:
			rd.Outcome, rd.Error = "error", optional(r.Err.Error())
		case !r.Sends:
			rd.Outcome = "filtered_out"
		}
		out = append(out, rd)
	}
	return out
}

// Attempt is one processing job of a delivery: the one ingest enqueued
// (its batch's or its own), one a batch job gave it, or a replay's.
type Attempt struct {
	JobID       int64             `json:"job_id"`
	Kind        string            `json:"kind"` // process_deliveries (a batch's) or process_delivery
	Tags        []string          `json:"tags"` // from_batch: a job its batch's job gave it
	State       string            `json:"state"`
	Attempt     int               `json:"attempt"`
	MaxAttempts int               `json:"max_attempts"`
	Errors      []json.RawMessage `json:"errors"`
	CreatedAt   time.Time         `json:"created_at"`
	FinalizedAt *time.Time        `json:"finalized_at"`
	ReplayID    *int64            `json:"replay_id"` // null for the job ingest enqueued
	// AttemptsBefore is, for the job a batch job gave a delivery whose
	// handler failed in it, the attempts that batch job had made: this
	// job's attempts count on from there (Attempt and MaxAttempts are the
	// job's own; DeliveryAttempt adds them). 0 for every other job.
	AttemptsBefore int `json:"attempts_before"`
}

// DerivedKey is a downstream idempotency key a handler used.
type DerivedKey struct {
	Handler   string    `json:"handler"`
	Step      string    `json:"step"`
	Key       string    `json:"key"`
	JobID     *int64    `json:"job_id"`
	JobState  *string   `json:"job_state"`
	CreatedAt time.Time `json:"created_at"`
}

func (s *Server) getDelivery(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	d, err := s.readDelivery(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(d)
}

// readDelivery reads one delivery with its attempts, keys and sends, or a
// 404 error. It reads them in one snapshot: read one statement at a time,
// a replay that completed between two of them showed its job completed
// beside the status from before it, and the console, seeing nothing left
// to wait for, stopped following a delivery that still read "failed".
func (s *Server) readDelivery(ctx context.Context, id int64) (d DeliveryDetail, err error) {
	err = pgx.BeginTxFunc(ctx, s.cfg.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			d, err = readDeliveryTx(ctx, tx, id)
			return err
		})
	if err != nil {
		return d, err
	}
	payload := []byte(d.Payload)
	if d.PayloadBase64 {
		payload, _ = base64.StdEncoding.DecodeString(d.Payload) // encoded above: cannot fail
	}
	d.Routes = routeDecisions(s.cfg.Destinations, d, payload)
	return d, nil
}

func readDeliveryTx(ctx context.Context, tx pgx.Tx, id int64) (DeliveryDetail, error) {
	var (
		d       DeliveryDetail
		payload []byte
		sum     []byte
	)
	err := inbox.Get(ctx, tx, id).Scan(
		&d.ID, &d.Source, &d.DeliveryID, &d.EventType, &d.Status, &d.Origin, &d.ResourceKey, &d.Stale,
		&d.OccurredAt, &d.ReceivedAt, &d.ProcessedAt, &d.LastError, &d.Size, &d.Headers, &payload, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, errNotFound(fmt.Sprintf("no delivery with id %d", id))
	}
	if err != nil {
		return d, err
	}
	d.SHA256 = hex.EncodeToString(sum)
	d.Payload, d.PayloadBase64 = encodePayload(payload)

	rows, err := riverdb.DeliveryAttempts(ctx, tx, id)
	if err != nil {
		return d, err
	}
	if d.Attempts, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Attempt]); err != nil {
		return d, err
	}
	rows, err = riverdb.DeliveryKeys(ctx, tx, d.Source, d.DeliveryID)
	if err != nil {
		return d, err
	}
	if d.Keys, err = pgx.CollectRows(rows, pgx.RowToStructByPos[DerivedKey]); err != nil {
		return d, err
	}
	if d.Attempts == nil {
		d.Attempts = []Attempt{}
	}
	if d.Keys == nil {
		d.Keys = []DerivedKey{}
	}
	if d.Destinations, err = destination.SendsOf(ctx, tx, d.Source, d.DeliveryID); err != nil {
		return d, err
	}
	d.FailedSends = []destination.FailedSend{}
	for _, sd := range d.Destinations {
		if sd.State == "failed" && sd.FinishedAt != nil {
			d.FailedSends = append(d.FailedSends, destination.FailedSend{Destination: sd.Destination, Error: sd.LastError, FinishedAt: *sd.FinishedAt})
		}
	}
	return d, nil
}

// encodePayload is a stored body as JSON carries it: as text when it is
// UTF-8, else in base64 (the second result true).
func encodePayload(payload []byte) (string, bool) {
	if utf8.Valid(payload) {
		return string(payload), false
	}
	return base64.StdEncoding.EncodeToString(payload), true
}

func pathID(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound(fmt.Sprintf("%q is not an id", c.Params("id")))
	}
	return id, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// deliveryStatuses are the inbox's statuses (the CHECK on inbox.status).
var deliveryStatuses = map[string]bool{"received": true, "processed": true, "skipped": true, "failed": true}

// checkStatus refuses a status filter no delivery can have: a typo would
// otherwise match nothing and look like an empty inbox.
func checkStatus(status string) error {
	if status != "" && !deliveryStatuses[status] {
		return errBadRequest("status must be one of received, processed, skipped, failed")
	}
	return nil
}

func optionalTime(s, name string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, errBadRequest(fmt.Sprintf("%s must be an RFC 3339 time such as 2026-11-30T09:00:00Z", name))
	}
	return &t, nil
}

// Cursors are opaque to clients; today they hold the last id of a page.
func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("id:" + strconv.FormatInt(id, 10)))
}

func decodeCursor(s string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < 4 || string(raw[:3]) != "id:" {
		return 0, errors.New("bad cursor")
	}
	return strconv.ParseInt(string(raw[3:]), 10, 64)
}

// A list with until is ordered by received time (inbox.ListFilter.Until):
// its cursor holds the last row's received_at, in microseconds as stored,
// and its id.
func encodeTimeCursor(at time.Time, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("at:" + strconv.FormatInt(at.UnixMicro(), 10) + ":" + strconv.FormatInt(id, 10)))
}

func decodeTimeCursor(s string) (time.Time, int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	rest, ok := strings.CutPrefix(string(raw), "at:")
	at, id, ok2 := strings.Cut(rest, ":")
	if err != nil || !ok || !ok2 {
		return time.Time{}, 0, errors.New("bad cursor")
	}
	micros, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return time.Time{}, 0, err
	}
	n, err := strconv.ParseInt(id, 10, 64)
	return time.UnixMicro(micros), n, err
}
