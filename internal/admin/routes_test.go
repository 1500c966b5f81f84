package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

// A delivery's page says, for each destination its event type is routed
// to, what the routes as configured now make of it: sent, filtered out,
// or a route that fails to evaluate.
func TestDeliveryShowsTheRoutesVerdicts(t *testing.T) {
	t.Parallel()
	logger, _ := testlog.New(t)
	pool := testdb.New(t)
	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{{Name: "billing", Provider: "standard"}}})
	dest := func(name string) config.Destination {
		return config.Destination{Name: name, URL: "http://127.0.0.1:1/" + name}
	}
	svc, err := destination.Register(reg, destination.Config{
		Destinations: []config.Destination{dest("paid"), dest("big"), dest("broken"), dest("refunds")},
		Routes: []config.Route{
			{Source: "billing", Events: []string{"invoice.*"}, To: []string{"paid"}, Filter: `body.type == "invoice.paid"`},
			{Source: "billing", Events: []string{"invoice.*"}, To: []string{"big"}, Filter: `body.data.amount > 1000.0`},
			{Source: "billing", Events: []string{"invoice.*"}, To: []string{"broken"}, Filter: `body.data.customer == "c"`},
			{Source: "billing", Events: []string{"charge.refunded"}, To: []string{"refunds"}},
		},
		Sources: []string{"billing"}, Pool: pool, Logger: logger,
	})
	require.NoError(t, err)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	b := serveAdmin(t, pool, rc, svc, logger)

	rec, err := ingest.NewInbox(pool, rc).Record(context.Background(), ingest.Delivery{Source: "billing", DeliveryID: "msg_routes",
		EventType: "invoice.paid", Headers: http.Header{"Content-Type": {"application/json"}},
		Payload: []byte(`{"type":"invoice.paid","data":{"id":"in_1","amount":200}}`)})
	require.NoError(t, err)
	r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", rec.ID), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var d admin.DeliveryDetail
	r.json(t, &d)
	zero, two := 0, 2
	require.Equal(t, []admin.RouteDecision{
		{Destination: "paid", Route: &zero, Outcome: "sends"},
		{Destination: "big", Outcome: "filtered_out"},
		{Destination: "broken", Route: &two, Outcome: "error", Error: ptr("routes[2] (billing): filter: no such key: customer")},
	}, d.Routes)

	page := b.do(t, http.MethodGet, fmt.Sprintf("/console/deliveries/%d", rec.ID), "", nil)
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, string(page.body), "filtered out")
	require.Contains(t, string(page.body), "routes[2] (billing): filter: no such key: customer")
}

func ptr[T any](v T) *T { return &v }

// Reading a delivery runs no transform, however often the page is read: a
// transform costs up to its route's limits at each run, and what one made
// of the delivery is its send's, recorded once. A transform that would
// fail shows the route as sending; its error belongs to the send.
func TestReadingADeliveryRunsNoTransform(t *testing.T) {
	t.Parallel()
	logger, _ := testlog.New(t)
	pool := testdb.New(t)
	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{{Name: "billing", Provider: "standard"}}})
	svc, err := destination.Register(reg, destination.Config{
		Destinations: []config.Destination{{Name: "chat", URL: "http://127.0.0.1:1/chat"}},
		Routes: []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"chat"},
			Filter: `body.type == "invoice.paid"`, Transform: `{"text": body.data.customer}`}},
		Sources: []string{"billing"}, Pool: pool, Logger: logger,
	})
	require.NoError(t, err)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	b := serveAdmin(t, pool, rc, svc, logger)

	rec, err := ingest.NewInbox(pool, rc).Record(context.Background(), ingest.Delivery{Source: "billing", DeliveryID: "msg_no_transform",
		EventType: "invoice.paid", Headers: http.Header{"Content-Type": {"application/json"}},
		Payload: []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)})
	require.NoError(t, err)
	r := b.do(t, http.MethodGet, fmt.Sprintf("/admin/deliveries/%d", rec.ID), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var d admin.DeliveryDetail
	r.json(t, &d)
	zero := 0
	require.Equal(t, []admin.RouteDecision{{Destination: "chat", Route: &zero, Outcome: "sends"}}, d.Routes)
}
