package jobs

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Handlers find a Kafka header with Get whatever case its producer sent;
// a webhook's headers, canonical already, are passed on as they are.
func TestHandlersSeeCanonicalHeaderNames(t *testing.T) {
	t.Parallel()
	got := canonicalHeaders(http.Header{"event_id": {"evt-1"}, "traceparent": {"00-ab"}, "Kafka-Topic": {"orders"}})
	require.Equal(t, "evt-1", got.Get("event_id"))
	require.Equal(t, "00-ab", got.Get("Traceparent"))
	require.Equal(t, "orders", got.Get("Kafka-Topic"))

	webhook := http.Header{"X-Github-Event": {"push"}}
	require.Equal(t, "push", canonicalHeaders(webhook).Get("X-GitHub-Event"))
}
