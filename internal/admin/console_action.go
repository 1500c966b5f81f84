package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/jobs"
)

// apiLocal is set while a console action runs the API's route: its errors
// are then the API's JSON, which the action turns into a page.
const apiLocal = "admin.console_api"

// apiCall is the API request a console form stands for.
type apiCall struct {
	body []byte // JSON; nil for a route that takes no body
}

// consoleAction runs the API route behind one of the console's buttons.
// The form carries the session's CSRF token (refuseCrossSite checked it
// before this runs) and the Idempotency-Key its page rendered once per
// click intent. The form becomes the API's own request (its JSON body, the
// Idempotency-Key header) and the API route's chain runs on it, the
// contract included: a form posted twice is one operation, and the second
// post gets the first one's answer. (The route's path parameters have the
// API's names; the path stays the console's, so the request's hash is not
// the API call's: one key is not meant for both.) That answer, fresh or replayed, becomes a
// redirect to the page that shows the outcome (next), or an error page.
func (s *Server) consoleAction(operation string, route fiber.Handler, call func(c *fiber.Ctx) (apiCall, error),
	next func(body []byte) (string, error)) fiber.Handler {
	api := s.mutation(operation, route)
	return func(c *fiber.Ctx) error {
		req, err := call(c)
		if err != nil {
			return err
		}
		key := formField(c, "idempotency_key")
		r := c.Request()
		if key == "" {
			r.Header.Del("Idempotency-Key") // not deduplicated, as in the API
		} else {
			r.Header.Set("Idempotency-Key", key)
		}
		r.Header.Del(fiber.HeaderContentType)
		if req.body != nil {
			r.Header.SetContentType(fiber.MIMEApplicationJSON)
		}
		r.SetBody(req.body)
		c.Locals(apiLocal, true)
		status, body, err := s.runAPI(c, api)
		c.Locals(apiLocal, nil)
		if err != nil {
			return err
		}
		c.Response().Reset()
		if status >= 300 {
			var e errorBody
			if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
				e.Error = errorDetail{Code: CodeInternal, Message: "internal error"}
			}
			return s.renderError(c, status, e.Error.Code, e.Error.Message)
		}
		to, err := next(body)
		if err != nil {
			return err
		}
		return c.Redirect(to, http.StatusSeeOther)
	}
}

// runAPI runs api and returns its answer. A request whose key another
// request still holds (the first of a double click) waits, a few seconds
// at most, for that request's answer.
func (s *Server) runAPI(c *fiber.Ctx, api fiber.Handler) (int, []byte, error) {
	for wait := 0; ; wait++ {
		if err := api(c); err != nil {
			if err := s.errorHandler(c, err); err != nil {
				return 0, nil, err
			}
		}
		status, body := c.Response().StatusCode(), bytes.Clone(c.Response().Body())
		var e errorBody
		if status != http.StatusConflict || wait >= 50 ||
			json.Unmarshal(body, &e) != nil || e.Error.Code != CodeRequestInProgress {
			return status, body, nil
		}
		c.Response().Reset()
		select {
		case <-c.UserContext().Done():
			return 0, nil, c.UserContext().Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// consoleReplay is the delivery page's Replay button:
// POST /admin/deliveries/{id}/replay.
func (s *Server) consoleReplay() fiber.Handler {
	return s.consoleAction("replay_delivery", s.replayDelivery, func(c *fiber.Ctx) (apiCall, error) {
		_, err := pathID(c)
		return apiCall{}, err
	}, func(body []byte) (string, error) {
		var r Replay
		if err := json.Unmarshal(body, &r); err != nil {
			return "", err
		}
		return fmt.Sprintf("/console/deliveries/%d?replay=%d", r.ID, r.ReplayID), nil
	})
}

// consoleBulkStart is the bulk replay form: POST /admin/bulk-replays.
func (s *Server) consoleBulkStart() fiber.Handler {
	return s.consoleAction("bulk_replay", s.createBulkReplay, func(c *fiber.Ctx) (apiCall, error) {
		req := bulkReplayRequest{Source: formField(c, "source"), Status: formField(c, "status"),
			EventType: formField(c, "event_type"), Since: formField(c, "since"), Until: formField(c, "until")}
		var err error
		if req.Limit, err = formLimit(formField(c, "limit")); err != nil {
			return apiCall{}, err
		}
		body, err := json.Marshal(req)
		return apiCall{body: body}, err
	}, func(body []byte) (string, error) {
		var b jobs.BulkReplay
		if err := json.Unmarshal(body, &b); err != nil {
			return "", err
		}
		return fmt.Sprintf("/console/bulk-replays/%d", b.ID), nil
	})
}

// consoleDestination is the Overview's pause, resume, retry and abandon
// buttons:
// POST /admin/destinations/{name}/{action}.
func (s *Server) consoleDestination() fiber.Handler {
	back := func([]byte) (string, error) { return "/console/#destinations", nil }
	noBody := func(*fiber.Ctx) (apiCall, error) { return apiCall{}, nil }
	actions := map[string]fiber.Handler{
		"pause":  s.consoleAction("destination_pause", s.setPaused(true), noBody, back),
		"resume": s.consoleAction("destination_resume", s.setPaused(false), noBody, back),
		"retry": s.consoleAction("destination_retry", s.retryDestination, func(c *fiber.Ctx) (apiCall, error) {
			body, err := json.Marshal(retryRequest{Status: "failed", Since: formField(c, "since")})
			return apiCall{body: body}, err
		}, back),
		"abandon": s.consoleAction("destination_abandon", s.abandonDestination, noBody, back),
	}
	return func(c *fiber.Ctx) error {
		action, ok := actions[c.Params("action")]
		if !ok {
			return errNotFound("no console page at " + c.Path())
		}
		return action(c)
	}
}
