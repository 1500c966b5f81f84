package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// Replay is one re-run of a stored delivery: GET /admin/replays/{id}, and
// the answer to POST /admin/deliveries/{id}/replay. A bulk replay is
// another resource (/admin/bulk-replays/{id}) that makes many of these.
type Replay struct {
	ReplayID     int64     `json:"replay_id"`
	ID           int64     `json:"id"`          // the inbox id
	Source       string    `json:"source"`      //
	DeliveryID   string    `json:"delivery_id"` // the provider's delivery id
	JobID        int64     `json:"job_id"`
	JobState     *string   `json:"job_state"`      // null once River's cleaner deleted the finished job
	BulkReplayID *int64    `json:"bulk_replay_id"` // the bulk replay that made it; null for a single replay
	RequestedAt  time.Time `json:"requested_at"`
}

// replayDelivery re-runs the handlers for one stored delivery: the replay
// record and its job are inserted in the request's transaction. Derived
// keys do not change, so replaying a processed delivery causes no new
// downstream effect.
func (s *Server) replayDelivery(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	ctx, t := c.UserContext(), tx(c)
	exists, err := inbox.Exists(ctx, t, id)
	if err != nil {
		return err
	}
	if !exists {
		return errNotFound(fmt.Sprintf("no delivery with id %d", id))
	}
	replays, err := jobs.ReplayTx(ctx, t, s.cfg.River, []int64{id}, nil)
	if err != nil {
		return err
	}
	r, err := readReplay(ctx, t, replays[0].ID)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLocation, replayPath(r.ReplayID))
	return c.Status(http.StatusAccepted).JSON(r)
}

// getOne answers GET /…/{id} with what read finds, or 404 naming what.
func getOne[T any](what string, read func(ctx context.Context, id int64) (T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c)
		if err != nil {
			return err
		}
		v, err := read(c.UserContext(), id)
		if errors.Is(err, jobs.ErrNotFound) {
			return errNotFound(fmt.Sprintf("no %s with id %d", what, id))
		}
		if err != nil {
			return err
		}
		return c.JSON(v)
	}
}

// readReplay reads one replay, or jobs.ErrNotFound.
func readReplay(ctx context.Context, q jobs.Querier, id int64) (Replay, error) {
	var r Replay
	err := riverdb.Replay(ctx, q, id).Scan(
		&r.ReplayID, &r.ID, &r.Source, &r.DeliveryID, &r.JobID, &r.JobState, &r.BulkReplayID, &r.RequestedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Replay{}, jobs.ErrNotFound
	}
	return r, err
}

// bulkReplayRequest is POST /admin/bulk-replays's body.
type bulkReplayRequest struct {
	Source    string `json:"source"`
	Status    string `json:"status"`
	EventType string `json:"event_type"`
	Since     string `json:"since"`
	Until     string `json:"until"`
	Limit     int    `json:"limit"`
}

// createBulkReplay records a bulk replay and enqueues the job that does it
// in batches; the request only starts it.
func (s *Server) createBulkReplay(c *fiber.Ctx) error {
	var req bulkReplayRequest
	dec := json.NewDecoder(bytesReader(c.Body()))
	dec.DisallowUnknownFields()
	if err := decodeOne(dec, &req); err != nil {
		return errBadRequest("body must be one JSON filter: {\"source\",\"status\",\"event_type\",\"since\",\"until\",\"limit\"}: " + err.Error())
	}
	f, err := replayFilter(req)
	if err != nil {
		return err
	}
	b, err := jobs.StartBulkReplayTx(c.UserContext(), tx(c), s.cfg.River, f)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLocation, bulkReplayPath(b.ID))
	return c.Status(http.StatusAccepted).JSON(b)
}

func replayPath(id int64) string     { return fmt.Sprintf("/admin/replays/%d", id) }
func bulkReplayPath(id int64) string { return fmt.Sprintf("/admin/bulk-replays/%d", id) }

// replayLocation and bulkReplayLocation are the Location of a stored
// answer of POST /admin/deliveries/{id}/replay and of POST
// /admin/bulk-replays, read from its body: api_idempotency keeps an
// answer's status and body, and a repeat carries the first one's Location.
func replayLocation(body []byte) string {
	var r Replay
	if json.Unmarshal(body, &r) != nil || r.ReplayID == 0 {
		return ""
	}
	return replayPath(r.ReplayID)
}

func bulkReplayLocation(body []byte) string {
	var b jobs.BulkReplay
	if json.Unmarshal(body, &b) != nil || b.ID == 0 {
		return ""
	}
	return bulkReplayPath(b.ID)
}

// replayFilter checks a bulk replay's filter and makes it the job's.
func replayFilter(req bulkReplayRequest) (jobs.ReplayFilter, error) {
	f := jobs.ReplayFilter{Source: optional(req.Source), Status: optional(req.Status), EventType: optional(req.EventType), Limit: req.Limit}
	if err := checkStatus(req.Status); err != nil {
		return f, err
	}
	if req.Limit < 0 || req.Limit > jobs.MaxBulkReplay {
		return f, errBulkLimit
	}
	var err error
	if f.Since, err = optionalTime(req.Since, "since"); err != nil {
		return f, err
	}
	f.Until, err = optionalTime(req.Until, "until")
	return f, err
}

var errBulkLimit = errBadRequest(fmt.Sprintf("limit must be 1 to %d (default %d)", jobs.MaxBulkReplay, jobs.DefaultBulkReplayLimit))

// formLimit is a form's limit field: empty for the default, else 1 or more.
func formLimit(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errBulkLimit
	}
	return n, nil
}

// bulkReplaysMoved answers the route bulk replays had before replays got
// /admin/replays/{id}: one path, two resources, made ids ambiguous.
func bulkReplaysMoved(*fiber.Ctx) error {
	return errNotFound("bulk replays are created with POST /admin/bulk-replays (POST /admin/replays is no more)")
}
