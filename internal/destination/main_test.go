package destination_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// schedule is a retry schedule of waits.
func schedule(waits ...time.Duration) []config.Duration {
	out := make([]config.Duration, len(waits))
	for i, w := range waits {
		out[i] = config.Duration(w)
	}
	return out
}

// validate checks one destination as serve's configuration check does.
func validate(d config.Destination) error {
	return destination.Validate([]config.Destination{d}, nil, nil)
}

// fast is a retry schedule for tests: many quick retries.
var fast = config.Retry{Schedule: schedule(50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond,
	50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond)}

type bundle struct {
	pool     *pgxpool.Pool
	client   *river.Client[pgx.Tx]
	inbox    *ingest.Inbox
	svc      *destination.Service
	recv     *receiver.Receiver
	log      *testlog.Buffer
	observed atomic.Int64
	gen      *jobs.Generation // set with setupOpts.fingerprint
}

type setupOpts struct {
	dest    func(d *config.Destination) // adjusts the destination "app"
	route   func(r *config.Route)       // adjusts the route billing → app
	extra   []config.Destination        // more destinations
	pool    *pgxpool.Pool               // a replica shares the first's database
	recv    *receiver.Receiver          // and its receiver
	noStart bool
	noApp   bool           // the process does not have destination "app" (nor the route to it)
	routes  []config.Route // more routes
	seen    time.Duration  // Config.SeenEvery
	// fingerprint, when set, runs a jobs.Generation of it: the process
	// leaves processing to one of a newer configuration.
	fingerprint string
	deferrals   func(outcome string) // the Generation's Observe
	// every is the Generation's Every; 0: 50 ms. Processing jobs left
	// waiting take MaxDeferrals of them before an outdated process
	// processes them all the same.
	every time.Duration
}

func setup(t *testing.T) *bundle { return setupWith(t, setupOpts{}) }

// setupWith runs one "process": a registry with destination "app" routed
// from source billing (standard), a River client working its jobs, the
// destinations' senders, and an inbox to deliver into.
func setupWith(t *testing.T, opts setupOpts) *bundle {
	t.Helper()
	logger, logs := testlog.New(t)
	b := &bundle{pool: opts.pool, recv: opts.recv, log: logs}
	if b.pool == nil {
		b.pool = testdb.New(t)
	}
	if b.recv == nil {
		b.recv = receiver.New(t, secret)
	}
	d := config.Destination{Name: "app", URL: b.recv.URL + "/webhooks", Secret: secret, Timeout: config.Duration(500 * time.Millisecond),
		Headers: map[string]string{"Authorization": "Bearer app-token"}, Retry: fast}
	if opts.dest != nil {
		opts.dest(&d)
	}
	route := config.Route{Source: "billing", Events: []string{"*"}, To: []string{"app"}}
	if opts.route != nil {
		opts.route(&route)
	}
	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{
		{Name: "billing", Provider: "standard"}, {Name: "github", Provider: "github"},
	}})
	dests, routes := append([]config.Destination{d}, opts.extra...), append([]config.Route{route}, opts.routes...)
	if opts.noApp {
		dests, routes = opts.extra, opts.routes
	}
	var err error
	b.svc, err = destination.Register(reg, destination.Config{
		Destinations: dests, Routes: routes,
		Sources: []string{"billing", "github"}, Pool: b.pool, Logger: logger,
		Observe:      func(string, string, time.Duration) { b.observed.Add(1) },
		PollInterval: 50 * time.Millisecond, SeenEvery: opts.seen,
	})
	require.NoError(t, err)
	var gen *jobs.Generation
	if opts.fingerprint != "" {
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		every := cmp.Or(opts.every, 50*time.Millisecond)
		gen, err = jobs.StartGeneration(ctx, b.pool, jobs.GenerationConfig{Fingerprint: opts.fingerprint, Every: every,
			Observe: opts.deferrals, Logger: logger})
		require.NoError(t, err)
		require.NoError(t, gen.Settle(ctx))
	}
	b.gen = gen
	b.client, err = jobs.NewClient(b.pool, jobs.ClientConfig{
		Registry: reg, FetchPollInterval: 50 * time.Millisecond, Logger: logger, RetryPolicy: fastRetry{}, Generation: gen,
	})
	require.NoError(t, err)
	b.inbox = ingest.NewInbox(b.pool, b.client)
	if !opts.noStart {
		b.start(t)
	}
	return b
}

func (b *bundle) start(t *testing.T) {
	t.Helper()
	require.NoError(t, b.client.Start(context.Background()))
	require.NoError(t, b.svc.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.svc.Stop(ctx)
		if err := b.client.Stop(ctx); err != nil {
			_ = b.client.StopAndCancel(context.Background())
		}
	})
}

type fastRetry struct{}

func (fastRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(20 * time.Millisecond) }

var seq atomic.Int64

func newID(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), seq.Add(1))
}

func payload(eventType, resource string, at time.Time) []byte {
	return []byte(fmt.Sprintf(`{"type":%q,"timestamp":%q,"data":{"id":%q}}`, eventType, at.UTC().Format(time.RFC3339), resource))
}

// deliver records a billing delivery as ingest does and returns its id and
// inbox id.
func (b *bundle) deliver(t *testing.T, eventType, resource string, at time.Time) (string, int64) {
	t.Helper()
	id := newID("msg")
	rec, err := b.inbox.Record(context.Background(), ingest.Delivery{
		Source: "billing", DeliveryID: id, EventType: eventType, OccurredAt: at,
		Headers: http.Header{"Content-Type": {"application/json"}}, Payload: payload(eventType, resource, at),
	})
	require.NoError(t, err)
	return id, rec.ID
}

// sendState waits for the send of a delivery to reach one of states.
func (b *bundle) waitSend(t *testing.T, deliveryID string, states ...string) string {
	t.Helper()
	var state string
	require.Eventually(t, func() bool {
		err := b.pool.QueryRow(context.Background(), "SELECT state FROM destination_send WHERE delivery_id = $1", deliveryID).Scan(&state)
		if err != nil {
			return false
		}
		for _, s := range states {
			if s == state {
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "send of %s never became %v (last %q)", deliveryID, states, state)
	return state
}

// waitAttempts waits until n attempts of a delivery's send are recorded:
// a request the receiver has seen is in flight until then, and its result
// (its next retry's time among it) is still to be written.
func (b *bundle) waitAttempts(t *testing.T, deliveryID string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM destination_attempt a JOIN destination_send s ON s.id = a.send_id
			WHERE s.delivery_id = $1`, deliveryID) == n
	}, 20*time.Second, 10*time.Millisecond, "send of %s never had %d attempts recorded", deliveryID, n)
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// retryFailed retries the failed sends of the last hour, as an operator's
// retry does, and returns how many it took.
func (b *bundle) retryFailed(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, pgx.BeginFunc(context.Background(), b.pool, func(tx pgx.Tx) error {
		var err error
		n, err = b.svc.RetryFailedTx(context.Background(), tx, "app", time.Now().Add(-time.Hour))
		return err
	}))
	return n
}
