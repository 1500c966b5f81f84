package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A destination's and a route's keys decode into the types
// internal/destination sends from; what a destination leaves unset stays
// zero for it to fill, and a route's max_output_bytes defaults to
// max_body_bytes.
func TestDestinationAndRouteKeys(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
max_body_bytes: 1048576
sources: [{name: github, provider: github, secrets: [x]}]
destinations:
  - name: orders-api
    url: "https://orders.internal/webhooks"
    tls: {ca_file: /etc/ca.pem}
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    headers: { Authorization: "Bearer ${ORDERS_TOKEN}" }
    timeout: 3s
    max_in_flight: 4
    rate_limit: 50
    retry: { schedule: [5s, 30s], max_age: 1d }
    circuit: { failures: 5, probe_every: 10s }
  - {name: events, kafka: {brokers: ["k:9092"], topic: "hookinbox.{source}", key: delivery}}
  - {name: bus, nats: {url: "nats://n:4222", subject: "hookinbox.{source}"}}
  - {name: plain, url: "https://plain.internal/"}
routes:
  - {source: github, events: ["issues"], to: [orders-api], ordered: true, skip_stale: true, filter: "true", cost_limit: 1000}
  - {source: github, events: ["*"], to: [plain], max_output_bytes: 4096}
`), envOf(map[string]string{"ORDERS_TOKEN": "t0k"}))
	require.NoError(t, err)
	d := cfg.Destinations[0]
	require.Equal(t, Destination{Name: "orders-api", URL: "https://orders.internal/webhooks", TLS: TLS{CAFile: "/etc/ca.pem"},
		Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Headers: map[string]string{"Authorization": "Bearer t0k"},
		Timeout: Duration(3 * time.Second), MaxInFlight: 4, RateLimit: 50,
		Retry:   Retry{Schedule: []Duration{Duration(5 * time.Second), Duration(30 * time.Second)}, MaxAge: Duration(24 * time.Hour)},
		Circuit: Circuit{Failures: 5, ProbeEvery: Duration(10 * time.Second)}}, d)
	require.Equal(t, &KafkaDestination{Brokers: []string{"k:9092"}, Topic: "hookinbox.{source}", Key: "delivery"}, cfg.Destinations[1].Kafka)
	require.Equal(t, &NATSDestination{URL: "nats://n:4222", Subject: "hookinbox.{source}"}, cfg.Destinations[2].NATS)
	require.Equal(t, Destination{Name: "plain", URL: "https://plain.internal/"}, cfg.Destinations[3], "unset keys stay zero")
	require.Equal(t, Route{Source: "github", Events: []string{"issues"}, To: []string{"orders-api"}, Ordered: true, SkipStale: true,
		Filter: "true", CostLimit: 1000, MaxOutputBytes: 1 << 20}, cfg.Routes[0])
	require.Equal(t, 4096, cfg.Routes[1].MaxOutputBytes)
}
