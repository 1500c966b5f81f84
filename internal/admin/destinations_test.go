package admin_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

// setupDestinations runs the admin server over a process that sends the
// billing source's deliveries to destination "app".
func setupDestinations(t *testing.T) (*testBundle, *receiver.Receiver) {
	t.Helper()
	logger, _ := testlog.New(t)
	pool := testdb.New(t)
	recv := receiver.New(t, "")
	reg := handlers.NewRegistry(handlers.Config{Logger: logger, Sources: []handlers.Source{{Name: "billing", Provider: "standard"}}})
	svc, err := destination.Register(reg, destination.Config{
		Destinations: []config.Destination{{Name: "app", URL: recv.URL,
			Retry: config.Retry{Schedule: []config.Duration{config.Duration(20 * time.Millisecond), config.Duration(20 * time.Millisecond)}}}},
		Routes:  []config.Route{{Source: "billing", Events: []string{"*"}, To: []string{"app"}}},
		Sources: []string{"billing"}, Pool: pool, Logger: logger,
	})
	require.NoError(t, err)
	rc, err := jobs.NewClient(pool, jobs.ClientConfig{Registry: reg, RetryPolicy: fastRetry{}, FetchPollInterval: 50 * time.Millisecond, Logger: logger})
	require.NoError(t, err)
	require.NoError(t, rc.Start(context.Background()))
	require.NoError(t, svc.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = svc.Stop(ctx)
		_ = rc.Stop(ctx)
	})
	return serveAdmin(t, pool, rc, svc, logger), recv
}

// serveAdmin runs the admin server over pool, rc and the destinations of
// svc (source billing) until the test ends.
func serveAdmin(t *testing.T, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], svc *destination.Service, logger *slog.Logger) *testBundle {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := admin.NewServer(admin.Config{Admin: config.Admin{Token: token, Listen: ln.Addr().String()}, Pool: pool, River: rc, Logger: logger,
		Sources: []string{"billing"}, Destinations: svc})
	require.NoError(t, err)
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return &testBundle{pool: pool, river: rc, inbox: ingest.NewInbox(pool, rc), baseURL: "http://" + ln.Addr().String(),
		client: newClient(t, nil), t: t}
}

type destinationList struct {
	Items []destination.Status `json:"items"`
}

func (b *testBundle) destinations(t *testing.T) []destination.Status {
	t.Helper()
	r := b.do(t, http.MethodGet, "/admin/destinations", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var l destinationList
	r.json(t, &l)
	return l.Items
}

func (b *testBundle) sendState(t *testing.T, deliveryID string) string {
	t.Helper()
	var s string
	_ = b.pool.QueryRow(context.Background(), "SELECT state FROM destination_send WHERE delivery_id = $1", deliveryID).Scan(&s)
	return s
}

// Operators see each destination's health, pause and resume it, and send
// failed sends again with their same keys; a delivery shows what each
// destination got.
func TestDestinationsAdmin(t *testing.T) {
	t.Parallel()
	b, recv := setupDestinations(t)
	sts := b.destinations(t)
	require.Len(t, sts, 1)
	require.Equal(t, "app", sts[0].Name)
	require.Equal(t, "active", sts[0].State)

	key := map[string]string{"Idempotency-Key": "pause-1"}
	r := b.do(t, http.MethodPost, "/admin/destinations/app/pause", "", key)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	again := b.do(t, http.MethodPost, "/admin/destinations/app/pause", "", key)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, r.body, again.body)

	id := "msg_admin_dest_1"
	b.deliver(t, "billing", id, "invoice.paid", `{"type":"invoice.paid","data":{"id":"inv_1"}}`)
	require.Eventually(t, func() bool { return b.destinations(t)[0].Pending == 1 }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "paused", b.destinations(t)[0].State)
	require.Empty(t, recv.Requests())

	recv.SetFallback(receiver.Fail)
	r = b.do(t, http.MethodPost, "/admin/destinations/app/resume", "", map[string]string{"Idempotency-Key": "resume-1"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Eventually(t, func() bool { return b.sendState(t, id) == "failed" }, 10*time.Second, 20*time.Millisecond)
	sts = b.destinations(t)
	require.NotNil(t, sts[0].FailingSince)
	require.EqualValues(t, 1, sts[0].Counts["failed"])

	var detail struct {
		Destinations []destination.Send `json:"destinations"`
	}
	var inboxID int64
	require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT id FROM inbox WHERE delivery_id = $1", id).Scan(&inboxID))
	b.do(t, http.MethodGet, "/admin/deliveries/"+strconv.FormatInt(inboxID, 10), "", nil).json(t, &detail)
	require.Len(t, detail.Destinations, 1)
	d := detail.Destinations[0]
	require.Equal(t, "app", d.Destination)
	require.Equal(t, "failed", d.State)
	require.Equal(t, destination.Key("billing", id, "app"), d.Key)
	require.Len(t, d.Attempts, 3, "the first request and the schedule's two retries")
	require.Equal(t, http.StatusInternalServerError, *d.Attempts[0].Status)

	recv.SetFallback(receiver.Apply)
	body := `{"status":"failed","since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`
	r = b.do(t, http.MethodPost, "/admin/destinations/app/retry", body, map[string]string{"Idempotency-Key": "retry-1"})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	var retried struct{ Retried int }
	r.json(t, &retried)
	require.Equal(t, 1, retried.Retried)
	require.Eventually(t, func() bool { return b.sendState(t, id) == "succeeded" }, 10*time.Second, 20*time.Millisecond)
	for _, req := range recv.Requests() {
		require.Equal(t, destination.Key("billing", id, "app"), req.WebhookID)
	}
	require.Len(t, recv.Effects(), 1)
	// The same key again replays the answer and sends nothing new.
	again = b.do(t, http.MethodPost, "/admin/destinations/app/retry", body, map[string]string{"Idempotency-Key": "retry-1"})
	require.Equal(t, r.body, again.body)
}

// Bad requests get a clear 4xx and change nothing.
func TestDestinationsAdminRefusals(t *testing.T) {
	t.Parallel()
	b, _ := setupDestinations(t)
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		code                     string
	}{
		{"unknown destination", http.MethodPost, "/admin/destinations/nope/pause", "", nil, 404, "not_found"},
		{"unknown destination retry", http.MethodPost, "/admin/destinations/nope/retry", `{"status":"failed"}`, nil, 404, "not_found"},
		{"retry needs status failed", http.MethodPost, "/admin/destinations/app/retry", `{"status":"succeeded"}`, nil, 400, "bad_request"},
		{"retry bad since", http.MethodPost, "/admin/destinations/app/retry", `{"status":"failed","since":"yesterday"}`, nil, 400, "bad_request"},
		{"retry unknown field", http.MethodPost, "/admin/destinations/app/retry", `{"status":"failed","x":1}`, nil, 400, "bad_request"},
		{"retry not JSON", http.MethodPost, "/admin/destinations/app/retry", `{"status":"failed"}`, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"cross-site pause", http.MethodPost, "/admin/destinations/app/pause", "",
			map[string]string{"Authorization": basic("x", token), "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, "cross_site_request"},
	} {
		r := b.do(t, tc.method, tc.path, tc.body, tc.header)
		require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
		require.Equal(t, tc.code, r.errorCode(t), tc.name)
	}
	require.Equal(t, "active", b.destinations(t)[0].State, "nothing changed")
}
