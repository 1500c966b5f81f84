package handlertest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/handlertest"
)

// registerNotifier is the code under test: for each paid invoice of the
// billing source, it tells an API, with a key derived from the delivery
// so that the API applies a retry or a replay once.
func registerNotifier(r *handlers.Registry, apiURL string) error {
	return r.Register(handlers.Registration{
		Name:     "example.notifier", // part of the derived keys: never rename
		Source:   "billing",
		Events:   []string{"invoice.paid"},
		Ordering: handlers.EveryEvent,
		Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/notify", strings.NewReader(string(e.Payload)))
			if err != nil {
				return err
			}
			req.Header.Set("Idempotency-Key", e.Key("notify"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode >= 300 {
				return fmt.Errorf("notify: %s", resp.Status)
			}
			return nil
		}),
	})
}

// testNotifiesOnce is a test of the handler, as it reads in a _test.go
// file of your module beside
//
//	func TestMain(m *testing.M) { handlertest.Main(m) }
//
// A delivery is recorded as ingest records it, a real River client
// processes it against a fresh database, and a replay sends the API the
// same key again: one effect.
func testNotifiesOnce(t *testing.T) {
	api := handlertest.NewDownstream(t)
	env := handlertest.New(t, handlertest.Config{
		Register: func(r *handlers.Registry) error { return registerNotifier(r, api.URL) },
	})
	id := env.Deliver(t, "billing", "evt_1", "invoice.paid", []byte(`{"id":"evt_1","type":"invoice.paid"}`))
	env.WaitStatus(t, id, "processed")

	env.WaitJob(t, env.Replay(t, id))
	if n := len(api.Requests("/notify")); n != 2 {
		t.Fatalf("the API was called %d times, want 2 (the delivery and its replay)", n)
	}
	if effects := api.Effects("/notify"); len(effects) != 1 {
		t.Fatalf("effects %v, want one: the replay sent the same key", effects)
	}
}

// A handler's test needs a *testing.T, which an Example function is not
// given and no code outside package testing can make, so this example is
// compiled but not run here; TestNotifiesOnce runs testNotifiesOnce.
func Example() {
	_ = testNotifiesOnce // called from a Test function of your module
}
