package admin

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/jobs"
)

//go:embed sql/inbox_exists.sql
var inboxExistsSQL string

type replayResponse struct {
	ReplayID   int64  `json:"replay_id"`
	ID         int64  `json:"id"`          // the inbox id
	Source     string `json:"source"`      //
	DeliveryID string `json:"delivery_id"` // the provider's delivery id
	JobID      int64  `json:"job_id"`
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
	var resp replayResponse
	err = t.QueryRow(ctx, inboxExistsSQL, pgx.NamedArgs{"id": id}).Scan(&resp.Source, &resp.DeliveryID)
	if errors.Is(err, pgx.ErrNoRows) {
		return errNotFound(fmt.Sprintf("no delivery with id %d", id))
	}
	if err != nil {
		return err
	}
	replays, err := jobs.ReplayTx(ctx, t, s.cfg.River, []int64{id}, nil)
	if err != nil {
		return err
	}
	resp.ReplayID, resp.ID, resp.JobID = replays[0].ID, id, replays[0].JobID
	return c.Status(http.StatusAccepted).JSON(resp)
}

// bulkReplayRequest is POST /admin/replays's body.
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
	if err := checkStatus(req.Status); err != nil {
		return err
	}
	if req.Limit < 0 || req.Limit > jobs.MaxBulkReplay {
		return errBadRequest(fmt.Sprintf("limit must be 1 to %d (default %d)", jobs.MaxBulkReplay, jobs.DefaultBulkReplayLimit))
	}
	f := jobs.ReplayFilter{Source: optional(req.Source), Status: optional(req.Status), EventType: optional(req.EventType), Limit: req.Limit}
	var err error
	if f.Since, err = optionalTime(req.Since, "since"); err != nil {
		return err
	}
	if f.Until, err = optionalTime(req.Until, "until"); err != nil {
		return err
	}
	b, err := jobs.StartBulkReplayTx(c.UserContext(), tx(c), s.cfg.River, f)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLocation, fmt.Sprintf("/admin/replays/%d", b.ID))
	return c.Status(http.StatusAccepted).JSON(b)
}

func (s *Server) getBulkReplay(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	b, err := jobs.GetBulkReplay(c.UserContext(), s.cfg.Pool, id)
	if errors.Is(err, jobs.ErrNotFound) {
		return errNotFound(fmt.Sprintf("no bulk replay with id %d", id))
	}
	if err != nil {
		return err
	}
	return c.JSON(b)
}
