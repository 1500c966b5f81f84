package handlertest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/handlertest"
)

// registerNotifier is the code under test: for each paid invoice of the
// billing source, a follow-up job tells an API, with a key derived from
// the delivery, enqueued once however often the delivery is processed.
func registerNotifier(r *handlers.Registry, apiURL string) error {
	handlers.AddWorker(r, &notifyWorker{url: apiURL, client: &http.Client{Timeout: time.Second}})
	return r.Register(handlers.Registration{
		Name:     "example.notifier", // part of the derived keys: never rename
		Source:   "billing",
		Events:   []string{"invoice.paid"},
		Ordering: handlers.EveryEvent,
		Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
			_, err := e.EnqueueOnce(ctx, "notify", NotifyArgs{Body: e.Payload, Key: e.Key("notify")}, nil)
			return err
		}),
	})
}

// NotifyArgs is one call of the API and its idempotency key.
type NotifyArgs struct {
	Body []byte `json:"body"`
	Key  string `json:"key" river:"unique"`
}

func (NotifyArgs) Kind() string { return "example_notify" }
func (NotifyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: handlers.QueueDownstream, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type notifyWorker struct {
	river.WorkerDefaults[NotifyArgs]
	client *http.Client
	url    string
}

func (w *notifyWorker) Work(ctx context.Context, job *river.Job[NotifyArgs]) error {
	_, err := handlers.Call{URL: w.url + "/notify", Key: job.Args.Key, Body: job.Args.Body}.Post(ctx, w.client)
	return handlers.JobResult(job.JobRow, err)
}

// testNotifiesOnce is a test of the handler, as it reads in a _test.go
// file of your module beside
//
//	func TestMain(m *testing.M) { handlertest.Main(m) }
//
// A delivery is recorded as ingest records it and a real River client
// processes it against a fresh database; its replay is processed too,
// and the API is still called once.
func testNotifiesOnce(t *testing.T) {
	api := handlertest.NewDownstream(t)
	env := handlertest.New(t, handlertest.Config{
		Register: func(r *handlers.Registry) error { return registerNotifier(r, api.URL) },
	})
	id := env.Deliver(t, "billing", "evt_1", "invoice.paid", []byte(`{"id":"evt_1","type":"invoice.paid"}`))
	env.WaitStatus(t, id, "processed")
	env.WaitJobs(t, "example_notify")

	env.WaitJob(t, env.Replay(t, id))
	env.WaitJobs(t, "example_notify")
	if n := len(api.Requests("/notify")); n != 1 {
		t.Fatalf("the API was called %d times, want once for the delivery and its replay", n)
	}
}

// A handler's test needs a *testing.T, which an Example function is not
// given and no code outside package testing can make, so this example is
// compiled but not run; TestNotifiesOnce runs testNotifiesOnce against the
// embedded database.
func Example() {
	_ = testNotifiesOnce // called from a Test function of your module
}
