package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKafkaSourceDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
sources:
  - name: orders
    kafka: {brokers: ["127.0.0.1:9092"], topics: [orders.confirmed]}
`), envOf(nil))
	require.NoError(t, err)
	s := cfg.Sources[0]
	require.Equal(t, ProviderKafka, s.Provider)
	require.Equal(t, KafkaSource{Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"orders.confirmed"},
		Group: "hookinbox-orders", DeliveryID: "offset", EventType: "topic", Start: "latest",
		SessionTimeout: Duration(DefaultKafkaSessionTimeout), LagEvery: Duration(DefaultKafkaLagEvery)}, *s.Kafka)
	require.False(t, s.DedupBodies(), "the broker's redeliveries carry their id")
}

func TestKafkaSourceErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	const ok = `brokers: ["k:9092"], topics: [t]`
	cases := []struct{ name, yaml, want string }{
		{"no brokers", "sources: [{name: o, kafka: {topics: [t]}}]", `sources[0] (o).kafka.brokers: at least one host:port`},
		{"bare port", "sources: [{name: o, kafka: {brokers: ['9092'], topics: [t]}}]", `sources[0] (o).kafka.brokers[0]: "9092" is not host:port`},
		{"no topics", "sources: [{name: o, kafka: {brokers: ['k:9092']}}]", `sources[0] (o).kafka.topics: at least one topic`},
		{"secrets", "sources: [{name: o, secrets: [x], kafka: {" + ok + "}}]", `sources[0] (o).secrets: a kafka source verifies no signature`},
		{"other provider", "sources: [{name: o, provider: github, kafka: {" + ok + "}}]", `sources[0] (o).provider: a source with a kafka block is provider kafka`},
		{"bad delivery id", "sources: [{name: o, kafka: {" + ok + ", delivery_id: id}}]", `sources[0] (o).kafka.delivery_id: "id" (want header:NAME or key or offset)`},
		{"empty header", "sources: [{name: o, kafka: {" + ok + ", delivery_id: 'header:'}}]", `sources[0] (o).kafka.delivery_id: "header:": the header name is empty`},
		{"bad event type", "sources: [{name: o, kafka: {" + ok + ", event_type: key}}]", `sources[0] (o).kafka.event_type: "key" (want header:NAME or topic)`},
		{"bad start", "sources: [{name: o, kafka: {" + ok + ", start: beginning}}]", `sources[0] (o).kafka.start: "beginning" (want earliest or latest)`},
		{"kafka provider without block", "sources: [{name: o, provider: kafka}]", `sources[0] (o).kafka: required for provider kafka`},
		{"short session", "sources: [{name: o, kafka: {" + ok + ", session_timeout: 100ms}}]", `sources[0] (o).kafka.session_timeout: 100ms (want 1s to 30m`},
		{"lag read too often", "sources: [{name: o, kafka: {" + ok + ", lag_every: 500ms}}]", `sources[0] (o).kafka.lag_every: 500ms (want 1s to 5m)`},
		{"misspelt key", "sources: [{name: o, kafka: {" + ok + ", topic: t}}]", `field topic not found`},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.yaml), envOf(nil))
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}
