package destination

import (
	"fmt"

	"github.com/hookinbox/hookinbox/internal/config"
)

// targets are the routes, compiled, by source: each route once per
// destination it names, in configuration order.
type targets map[string][]target

func newTargets(routes []config.Route, sources []string) (targets, error) {
	ts := targets{}
	for i, route := range routes {
		expr, err := compileRoute(route)
		if err != nil {
			return nil, fmt.Errorf("routes[%d] (%s).%w", i, route.Source, err)
		}
		srcs := []string{route.Source}
		if route.Source == "*" {
			srcs = sources
		}
		for _, src := range srcs {
			for _, to := range route.To {
				ts[src] = append(ts[src], target{route: route, index: i, expr: expr, destination: to})
			}
		}
	}
	return ts, nil
}

// RouteResult is what the routes make of one delivery for one destination
// its event type is routed to.
type RouteResult struct {
	Destination string
	// Route is the index of the route that decided, -1 when every route's
	// filter refused the delivery.
	Route int
	// Sends is true when the destination gets the delivery: Body, with
	// ContentType.
	Sends       bool
	Body        []byte
	ContentType string
	// Err is the deciding route's filter or transform failing to
	// evaluate: serve records the send failed with it.
	Err error
}

// Evaluate runs routes over one delivery as the outbox and the senders
// do, and says, for each destination its event type is routed to, whether
// and what it would be sent. Nothing is sent or stored. sources are the
// configured sources' names (routes from "*" cover them all).
func Evaluate(routes []config.Route, sources []string, in ExprInput) ([]RouteResult, error) {
	ts, err := newTargets(routes, sources)
	if err != nil {
		return nil, err
	}
	return ts.evaluate(in, true), nil
}

// Explain is Evaluate with the service's routes, their filters only: which
// route, as configured now, decides a stored delivery for each destination
// and whether it sends. No transform runs (Body is nil, Sends ignores
// them): a page that shows a delivery is read again and again, and a
// transform costs up to its route's limits at each read; what a transform
// made of the delivery is its send's, recorded when it was made.
func (s *Service) Explain(in ExprInput) []RouteResult { return s.targets.evaluate(in, false) }

// evaluate is what ts make of in for each destination, running the
// deciding route's transform when transform is set.
func (ts targets) evaluate(in ExprInput, transform bool) []RouteResult {
	var out []RouteResult
	for _, name := range ts.destinationsFor(in.Source, in.EventType) {
		r := RouteResult{Destination: name, Route: -1}
		t, ok, err := ts.routeFor(name, &in)
		if ok {
			r.Route, r.Err = t.index, err
		}
		switch {
		case ok && err == nil && transform:
			r.Body, r.ContentType, r.Err = t.apply(&in)
			r.Sends = r.Err == nil
		case ok && err == nil:
			r.Sends = true
		}
		out = append(out, r)
	}
	return out
}
