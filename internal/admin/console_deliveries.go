package admin

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

type deliveriesView struct {
	pageBase
	Filter   deliveryFilter
	Sources  []string
	Statuses []string
	Items    []Delivery
	// Newest is true on the first page, which polls for new deliveries.
	Newest    bool
	PollURL   string
	NextURL   string // the next (older) page; "" on the last
	NewestURL string // the first page of the same filter
	BulkURL   string // a bulk replay of the same filter; "" for a list of failed sends
	APIURL    string // the same list from the API
}

// statusNames are the inbox's statuses in the order a form offers them.
var statusNames = []string{"received", "processed", "skipped", "failed"}

// consoleDeliveries is GET /console/deliveries: the API's list and
// filters (the same query parameters, so a filtered URL is shareable and
// maps to GET /admin/deliveries), newest first, keyset-paginated.
func (s *Server) consoleDeliveries(c *fiber.Ctx) error {
	f, page, err := s.listPage(c)
	if err != nil {
		return err
	}
	q := f.query()
	v := deliveriesView{pageBase: s.page(c, "Deliveries", "deliveries"), Filter: f, Sources: sourceChoices(s.cfg.Sources, f.Source),
		Statuses: statusNames, Items: page.Items, Newest: f.cursor == nil, APIURL: withQuery("/admin/deliveries", q),
		NewestURL: withQuery("/console/deliveries", q)}
	if f.SendStatus == "" {
		// A replay sends nothing again (a send is once per delivery and
		// destination): failed sends are retried per destination.
		v.BulkURL = withQuery("/console/bulk-replays/new", bulkQuery(q))
	}
	if page.NextCursor != nil {
		next := f.query()
		next.Set("cursor", *page.NextCursor)
		v.NextURL = withQuery("/console/deliveries", next)
	}
	if v.Newest {
		v.PollURL = pollURL(q, page.Items, 0)
	}
	return s.render(c, http.StatusOK, "deliveries", "layout", v)
}

// consoleDeliveryRows is the first page's poll: the rows newer than
// ?after=, and the poller again with the newest id. 204 when none came.
// When more came than a page holds, the page reloads instead.
func (s *Server) consoleDeliveryRows(c *fiber.Ctx) error {
	f, err := parseDeliveryFilter(c)
	if err != nil {
		return err
	}
	after, err := strconv.ParseInt(c.Query("after"), 10, 64)
	if err != nil || after < 0 {
		return errBadRequest("after must be a delivery id (0 or more)")
	}
	f.cursor, f.after = nil, &after
	page, err := s.queryDeliveries(c.UserContext(), f)
	if err != nil {
		return err
	}
	switch {
	case page.NextCursor != nil:
		c.Set("HX-Refresh", "true")
		return c.SendStatus(http.StatusNoContent)
	case len(page.Items) == 0:
		return c.SendStatus(http.StatusNoContent)
	}
	return s.render(c, http.StatusOK, "deliveries", "new_rows", deliveriesView{Items: page.Items, PollURL: pollURL(f.query(), page.Items, after)})
}

// pollURL asks for the deliveries newer than the newest of items (or than
// after, when items is empty).
func pollURL(q url.Values, items []Delivery, after int64) string {
	if len(items) > 0 {
		after = items[0].ID
	}
	q.Set("after", strconv.FormatInt(after, 10))
	return "/console/deliveries/rows?" + q.Encode()
}

// query is the filter as the API's query parameters (no cursor).
func (f deliveryFilter) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"source": f.Source, "status": f.Status, "event_type": f.EventType,
		"resource": f.Resource, "send_status": f.SendStatus, "destination": f.Destination, "since": f.Since, "until": f.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit != DefaultListLimit {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// withQuery is path with q, if q has anything.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// bulkQuery is a list's filter as a bulk replay's: no resource, no page
// size (a bulk replay has no resource filter, and a limit of its own).
func bulkQuery(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range []string{"source", "status", "event_type", "since", "until"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	return out
}
