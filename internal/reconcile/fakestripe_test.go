package reconcile_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStripe is a real HTTP server speaking the part of Stripe's API that
// reconcile uses: GET /v1/events with delivery_success, created[gte], limit
// and starting_after, newest first, in Stripe's list and error shapes.
type fakeStripe struct {
	srv *httptest.Server
	key string // the only key it accepts

	mu       sync.Mutex
	events   []*fakeEvent // newest first, as Stripe lists them
	requests []fakeRequest
	// unauthorizedBody, when set, is the whole body of a 401 instead of
	// Stripe's error shape (a proxy in front of the API).
	unauthorizedBody string
}

type fakeEvent struct {
	ID        string
	Type      string
	Created   time.Time
	Delivered bool   // every webhook succeeded: delivery_success=false hides it
	Raw       string // the event's JSON exactly as the API renders it
}

type fakeRequest struct {
	Authorization string
	Query         url.Values
}

func newFakeStripe(t *testing.T, key string) *fakeStripe {
	t.Helper()
	f := &fakeStripe{key: key}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// add appends events older than those already added.
func (f *fakeStripe) add(evs ...*fakeEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, evs...)
}

func (f *fakeStripe) setUnauthorizedBody(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unauthorizedBody = body
}

// setPendingWebhooks re-renders an event as Stripe does once some of its
// endpoints have been reached.
func (f *fakeStripe) setPendingWebhooks(id string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range f.events {
		if ev.ID == id {
			ev.Raw = renderEvent(ev.ID, ev.Type, ev.Created, n)
		}
	}
}

func (f *fakeStripe) recorded() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeStripe) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	f.requests = append(f.requests, fakeRequest{Authorization: r.Header.Get("Authorization"), Query: q})

	if r.Method != http.MethodGet || r.URL.Path != "/v1/events" {
		stripeError(w, http.StatusNotFound, "invalid_request_error", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+").")
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+f.key {
		if f.unauthorizedBody != "" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, f.unauthorizedBody)
			return
		}
		// Real Stripe masks the key it quotes; this one echoes it whole, to
		// prove reconcile removes it.
		stripeError(w, http.StatusUnauthorized, "invalid_request_error",
			"Invalid API Key provided: "+strings.TrimPrefix(got, "Bearer "))
		return
	}

	var since int64
	if v := q.Get("created[gte]"); v != "" {
		var err error
		if since, err = strconv.ParseInt(v, 10, 64); err != nil {
			stripeError(w, http.StatusBadRequest, "invalid_request_error", "Invalid integer: created[gte]")
			return
		}
	}
	onlyUndelivered := q.Get("delivery_success") == "false"
	limit := 10 // Stripe's default
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			stripeError(w, http.StatusBadRequest, "invalid_request_error", "Invalid limit: must be between 1 and 100")
			return
		}
		limit = n
	}

	var matching []*fakeEvent
	for _, ev := range f.events {
		if ev.Created.Unix() >= since && !(onlyUndelivered && ev.Delivered) {
			matching = append(matching, ev)
		}
	}
	if after := q.Get("starting_after"); after != "" {
		i := slices.IndexFunc(matching, func(ev *fakeEvent) bool { return ev.ID == after })
		if i < 0 {
			stripeError(w, http.StatusBadRequest, "invalid_request_error", "No such event: '"+after+"'")
			return
		}
		matching = matching[i+1:]
	}
	hasMore := len(matching) > limit
	if hasMore {
		matching = matching[:limit]
	}
	raws := make([]string, len(matching))
	for i, ev := range matching {
		raws[i] = ev.Raw
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	// Stripe pretty-prints its responses; the items keep that indentation.
	fmt.Fprintf(w, "{\n  \"object\": \"list\",\n  \"data\": [\n%s\n  ],\n  \"has_more\": %t,\n  \"url\": \"/v1/events\"\n}",
		strings.Join(raws, ",\n"), hasMore)
}

func stripeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake_error")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\n  \"error\": {\n    \"message\": %q,\n    \"type\": %q\n  }\n}", msg, typ)
}

// stripeEvent is a factory for an undelivered event in the API's shape.
func stripeEvent(id, typ string, created time.Time) *fakeEvent {
	return &fakeEvent{ID: id, Type: typ, Created: created, Raw: renderEvent(id, typ, created, 1)}
}

func renderEvent(id, typ string, created time.Time, pendingWebhooks int) string {
	return fmt.Sprintf(`    {
      "id": %q,
      "object": "event",
      "api_version": "2024-06-20",
      "created": %d,
      "data": {
        "object": {
          "id": "pi_%s",
          "object": "payment_intent",
          "amount": 2000,
          "currency": "usd",
          "metadata": {}
        }
      },
      "livemode": false,
      "pending_webhooks": %d,
      "request": {
        "id": null,
        "idempotency_key": null
      },
      "type": %q
    }`, id, created.Unix(), strings.TrimPrefix(id, "evt_"), pendingWebhooks, typ)
}
