package admin

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/resource_version_get.sql
var resourceVersionGetSQL string

type deliveryView struct {
	pageBase
	D        DeliveryDetail
	Pretty   string // the payload indented, when it is JSON
	Headers  []headerLine
	Attempts []attemptView
	Live     bool   // work is pending: the status section polls
	ReplayID string // the replay just requested (?replay=)
	ClickKey string // the Replay button's Idempotency-Key
	Stale    string // yes, no, or "" when processing recorded nothing (not processed, no resource)
	Resource *resourceVersion
	ByResURL string // the resource's deliveries
}

type headerLine struct{ Name, Value string }

// attemptView is one processing job with River's recorded errors, its
// attempts counted as the delivery's (Attempt.DeliveryAttempt).
type attemptView struct {
	Job    Attempt
	N, Of  int
	Errors []riverError
}

type riverError struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error"`
}

// resourceVersion is the newest version handlers applied to the
// delivery's resource (handlers' resource_version).
type resourceVersion struct {
	AppliedAt, AppliedReceivedAt, ReceiptAppliedAt *time.Time
}

// consoleDelivery is GET /console/deliveries/{id}: what the API's
// GET /admin/deliveries/{id} answers, for people.
func (s *Server) consoleDelivery(c *fiber.Ctx) error {
	v, err := s.deliveryView(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "delivery", "layout", v)
}

// consoleDeliveryLive is the delivery page's status, attempts and sends,
// polled while work is pending.
func (s *Server) consoleDeliveryLive(c *fiber.Ctx) error {
	v, err := s.deliveryView(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "delivery", "live", v)
}

func (s *Server) deliveryView(c *fiber.Ctx) (deliveryView, error) {
	id, err := pathID(c)
	if err != nil {
		return deliveryView{}, err
	}
	ctx := c.UserContext()
	d, err := s.readDelivery(ctx, id)
	if err != nil {
		return deliveryView{}, err
	}
	v := deliveryView{pageBase: s.page(c, "Delivery "+d.DeliveryID, "deliveries"), D: d, ReplayID: c.Query("replay"),
		ClickKey: newClickKey(), Live: d.Status == "received"}
	if !d.PayloadBase64 {
		var out bytes.Buffer
		if json.Indent(&out, []byte(d.Payload), "", "  ") == nil {
			v.Pretty = out.String()
		}
	}
	for name, values := range d.Headers {
		v.Headers = append(v.Headers, headerLine{name, strings.Join(values, ", ")})
	}
	sort.Slice(v.Headers, func(i, j int) bool { return v.Headers[i].Name < v.Headers[j].Name })
	for _, a := range d.Attempts {
		av := attemptView{Job: a}
		av.N, av.Of = a.DeliveryAttempt()
		for _, raw := range a.Errors {
			var e riverError
			if json.Unmarshal(raw, &e) == nil {
				e.Attempt += a.AttemptsBefore
				av.Errors = append(av.Errors, e)
			}
		}
		v.Attempts = append(v.Attempts, av)
		v.Live = v.Live || !finishedJob(a.State)
	}
	switch {
	case d.Stale == nil:
	case *d.Stale:
		v.Stale = "yes"
	default:
		v.Stale = "no"
	}
	for _, sd := range d.Destinations {
		v.Live = v.Live || sd.State == "waiting" || sd.State == "pending"
	}
	if d.ResourceKey != nil {
		v.ByResURL = "/console/deliveries?" + url.Values{"source": {d.Source}, "resource": {*d.ResourceKey}}.Encode()
		if v.Resource, err = s.resourceVersion(ctx, d.Source, *d.ResourceKey); err != nil {
			return v, err
		}
	}
	return v, nil
}

func finishedJob(state string) bool {
	return state == "completed" || state == "cancelled" || state == "discarded"
}

func (s *Server) resourceVersion(ctx context.Context, source, key string) (*resourceVersion, error) {
	var r resourceVersion
	err := s.cfg.Pool.QueryRow(ctx, resourceVersionGetSQL, pgx.NamedArgs{"source": source, "resource_key": key}).
		Scan(&r.AppliedAt, &r.AppliedReceivedAt, &r.ReceiptAppliedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return &r, err
}
