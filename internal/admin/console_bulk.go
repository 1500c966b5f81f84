package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/jobs"
)

type bulkNewView struct {
	pageBase
	Form      bulkReplayRequest
	Limit     string // as given
	Sources   []string
	Statuses  []string
	Previewed bool  // the form was filled in: the count is of its filter
	Matching  int64 // deliveries the filter selects, up to MaxBulkReplay+1
	Replays   int64 // how many the bulk replay would take (limit)
	Max       int
	ListURL   string // the same deliveries, in the list
}

// consoleBulkNew is GET /console/bulk-replays/new: the form of
// POST /admin/bulk-replays, and how many deliveries its filter selects now.
func (s *Server) consoleBulkNew(c *fiber.Ctx) error {
	req := bulkReplayRequest{Source: c.Query("source"), Status: c.Query("status"), EventType: c.Query("event_type"),
		Since: c.Query("since"), Until: c.Query("until")}
	v := bulkNewView{pageBase: s.page(c, "Bulk replay", "bulk"), Form: req, Limit: c.Query("limit"),
		Sources: sourceChoices(s.cfg.Sources, req.Source), Statuses: statusNames, Max: jobs.MaxBulkReplay}
	var err error
	if req.Limit, err = formLimit(v.Limit); err != nil {
		return err
	}
	f, err := replayFilter(req)
	if err != nil {
		return err
	}
	if v.Previewed = len(c.Request().URI().QueryArgs().QueryString()) > 0; v.Previewed {
		if v.Matching, err = s.previewBulk(c.UserContext(), f); err != nil {
			return err
		}
		v.Replays = min(v.Matching, int64(f.Limit))
		if f.Limit == 0 {
			v.Replays = min(v.Matching, jobs.DefaultBulkReplayLimit)
		}
		q := url.Values{}
		for k, val := range map[string]string{"source": req.Source, "status": req.Status, "event_type": req.EventType, "since": req.Since, "until": req.Until} {
			if val != "" {
				q.Set(k, val)
			}
		}
		v.ListURL = withQuery("/console/deliveries", q)
	}
	return s.render(c, http.StatusOK, "bulk_new", "layout", v)
}

func (s *Server) previewBulk(ctx context.Context, f jobs.ReplayFilter) (int64, error) {
	return inbox.CountSelected(ctx, s.cfg.Pool, inbox.Selection{Source: f.Source, Status: f.Status,
		EventType: f.EventType, Since: f.Since, Until: f.Until}, jobs.MaxBulkReplay+1)
}

type bulkView struct {
	pageBase
	B       jobs.BulkReplay
	Total   int // what done counts up to: the enqueued once all are, else the matched
	Percent int
	Live    bool
}

// consoleBulk is GET /console/bulk-replays/{id}: a bulk replay's
// progress (GET /admin/bulk-replays/{id}), followed until every replay it
// enqueued has finished.
func (s *Server) consoleBulk(c *fiber.Ctx) error {
	v, err := s.bulkView(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "bulk", "layout", v)
}

// consoleBulkProgress is the progress bar alone, polled.
func (s *Server) consoleBulkProgress(c *fiber.Ctx) error {
	v, err := s.bulkView(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "bulk", "progress", v)
}

func (s *Server) bulkView(c *fiber.Ctx) (bulkView, error) {
	id, err := pathID(c)
	if err != nil {
		return bulkView{}, err
	}
	b, err := jobs.GetBulkReplay(c.UserContext(), s.cfg.Pool, id)
	if errors.Is(err, jobs.ErrNotFound) {
		return bulkView{}, errNotFound(fmt.Sprintf("no bulk replay with id %d", id))
	}
	if err != nil {
		return bulkView{}, err
	}
	v := bulkView{pageBase: s.page(c, fmt.Sprintf("Bulk replay %d", b.ID), "bulk"), B: b, Total: b.Matched}
	if b.State == "finished" {
		v.Total = b.Enqueued
	}
	v.Percent = 100
	if v.Total > 0 {
		v.Percent = 100 * b.Done / v.Total
	}
	v.Live = b.State != "finished" || b.Done < b.Enqueued
	return v, nil
}

// sourceChoices are the configured sources, and the one a filter names
// if it is not (a source since removed from the config).
func sourceChoices(sources []string, chosen string) []string {
	for _, s := range sources {
		if s == chosen {
			return sources
		}
	}
	if chosen == "" {
		return sources
	}
	return append(append([]string(nil), sources...), chosen)
}
