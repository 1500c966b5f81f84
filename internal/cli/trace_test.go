package cli

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/telemetry"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// A delivery's spans, from the webhook to the destination: the request's
// server span only links the provider's traceparent; the processing job's
// span links the span that enqueued it; the handler runs in the job's
// trace, and the send's attempt continues that trace, which the receiving
// service gets as its traceparent.
func TestTracesFollowADeliveryToItsDestination(t *testing.T) {
	t.Parallel()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	var (
		mu          sync.Mutex
		traceparent string
	)
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparent = r.Header.Get("Traceparent")
		mu.Unlock()
	}))
	t.Cleanup(service.Close)
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
shutdown_timeout: 5s
sources: [{name: gh, provider: github, secrets: [s3cret], forward_url: %q}]
`, service.URL+"/hook")), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.NoError(t, CheckConfig(cfg))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	logs := &testlog.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runApp(ctx, AppConfig{Config: cfg, Pool: testdb.New(t), Listener: ln, AdminListener: adminLn, Stderr: logs,
			Lookup: func(string) (string, bool) { return "", false }, TracerProvider: tp})
	}()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "hookinbox ready") }, 30*time.Second, 20*time.Millisecond)

	const providerTrace = "0af7651916cd43dd8448eb211c80319c"
	body := []byte(`{"action":"created","repository":{"full_name":"o/r"}}`)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/webhooks/gh", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-GitHub-Delivery", "trace-1")
	req.Header.Set("X-GitHub-Event", "star")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("Traceparent", "00-"+providerTrace+"-b7ad6b7169203331-01")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return traceparent != ""
	}, 30*time.Second, 20*time.Millisecond, "log:\n%s", logs)
	var attempt sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		attempt = spanNamed(recorder, "POST gh-forward", "trace-1")
		return attempt != nil
	}, 10*time.Second, 20*time.Millisecond)

	request := spanNamed(recorder, "POST /webhooks/{source}", "trace-1")
	require.NotNil(t, request)
	require.NotEqual(t, providerTrace, request.SpanContext().TraceID().String(), "the provider's trace is never our parent")
	require.Len(t, request.Links(), 1)
	require.Equal(t, providerTrace, request.Links()[0].SpanContext.TraceID().String(), "only linked")

	handler := spanNamed(recorder, "handler destinations.gh", "trace-1")
	require.NotNil(t, handler)
	work := spanByID(recorder, handler.Parent().SpanID())
	require.NotNil(t, work, "the handler runs in its job's span")
	require.True(t, strings.HasPrefix(work.Name(), "river.work/process_deliver"), work.Name())
	require.NotEmpty(t, work.Links(), "the job's span links the span that enqueued it")

	require.Equal(t, work.SpanContext().TraceID(), attempt.SpanContext().TraceID(), "the send continues the processing's trace")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, fmt.Sprintf("00-%s-%s-01", attempt.SpanContext().TraceID(), attempt.SpanContext().SpanID()), traceparent,
		"the destination gets the attempt's traceparent")
}

// spanNamed is the ended span of that name about the delivery.
func spanNamed(r *tracetest.SpanRecorder, name, deliveryID string) sdktrace.ReadOnlySpan {
	for _, s := range r.Ended() {
		if s.Name() != name {
			continue
		}
		for _, a := range s.Attributes() {
			if a.Key == telemetry.DeliveryID && a.Value == attribute.StringValue(deliveryID) {
				return s
			}
		}
	}
	return nil
}

func spanByID(r *tracetest.SpanRecorder, id trace.SpanID) sdktrace.ReadOnlySpan {
	for _, s := range r.Ended() {
		if s.SpanContext().SpanID() == id {
			return s
		}
	}
	return nil
}
