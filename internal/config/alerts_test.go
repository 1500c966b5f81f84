package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const alertsBase = "sources: [{name: gh, provider: github, secrets: [x]}, {name: orders, kafka: {brokers: ['k:9092'], topics: [t], lag_every: 1m}}]\n" +
	"destinations: [{name: chat, url: 'http://x'}]\n"

func TestAlertsDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(alertsBase+"alerts: {to: [chat], rules: [{destination_failing: {}}, {sends_failed: {}}, {backlog: {over: 10}},"+
		" {kafka_lag: {source: orders, over: 10}}]}\n"), envOf(nil))
	require.NoError(t, err)
	a := cfg.Alerts
	require.Equal(t, 30*time.Second, a.Every.Std())
	require.Equal(t, 10*time.Minute, a.Rules[0].DestinationFailing.For.Std())
	require.Equal(t, 1, a.Rules[1].SendsFailed.Min)
	require.Equal(t, 5*time.Minute, a.Rules[2].Backlog.For.Std())
	require.Equal(t, 5*time.Minute, a.Rules[3].KafkaLag.For.Std())
}

func TestAlertsErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, yaml, want string }{
		{"no to", "alerts: {rules: [{sends_failed: {}}]}", "alerts.to: name the destinations"},
		{"unknown destination", "alerts: {to: [pager], rules: [{sends_failed: {}}]}", `alerts.to[0]: no destination named "pager"`},
		{"bad transform", "alerts: {to: [chat], transform: mattermost, rules: [{sends_failed: {}}]}", `alerts.transform: "mattermost"`},
		{"two kinds in a rule", "alerts: {to: [chat], rules: [{sends_failed: {}, backlog: {over: 1}}]}", "alerts.rules[0]: want exactly one of"},
		{"empty rule", "alerts: {to: [chat], rules: [{}]}", "alerts.rules[0]: want exactly one of"},
		{"silent unknown source", "alerts: {to: [chat], rules: [{source_silent: {source: stripe, for: 2h}}]}", `alerts.rules[0].source_silent.source: no source named "stripe"`},
		{"silent too long", "alerts: {to: [chat], rules: [{source_silent: {source: gh, for: 72h}}]}", "alerts.rules[0].source_silent.for: 72h0m0s (want more than 0 and at most 48h)"},
		{"lag of no source", "alerts: {to: [chat], rules: [{kafka_lag: {source: stripe, over: 10}}]}", `alerts.rules[0].kafka_lag.source: no source named "stripe"`},
		{"lag of a webhook source", "alerts: {to: [chat], rules: [{kafka_lag: {source: gh, over: 10}}]}", `alerts.rules[0].kafka_lag.source: "gh" is not a kafka source`},
		{"lag over unset", "alerts: {to: [chat], rules: [{kafka_lag: {source: orders}}]}", "alerts.rules[0].kafka_lag.over: 0 (want more than 0 messages)"},
		{"lag over negative", "alerts: {to: [chat], rules: [{kafka_lag: {source: orders, over: -5}}]}", "alerts.rules[0].kafka_lag.over: -5 (want more than 0 messages)"},
		{"lag for one reading", "alerts: {to: [chat], rules: [{kafka_lag: {source: orders, over: 10, for: 90s}}]}",
			`alerts.rules[0].kafka_lag.for: 1m30s (want at least 2m0s: twice kafka.lag_every of source "orders")`},
		{"two lag rules of a source", "alerts: {to: [chat], rules: [{kafka_lag: {source: orders, over: 10}}, {kafka_lag: {source: orders, over: 99}}]}",
			`alerts.rules[1].kafka_lag.source: a second kafka_lag rule of source "orders"`},
		{"reserved source name", "sources: [{name: hookinbox, provider: github, secrets: [x]}]", `sources[0] (hookinbox).name: "hookinbox" is the source of hookinbox's own alerts`},
	}
	for _, tc := range cases {
		y := alertsBase + tc.yaml
		if tc.name == "reserved source name" {
			y = tc.yaml
		}
		_, err := Parse([]byte(y), envOf(nil))
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}

// docs/observability.md's alerts block loads as written (beside a stripe
// source and a Kafka source orders, which its source_silent and kafka_lag
// rules name).
func TestDocsAlertsBlockLoads(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "observability.md"))
	require.NoError(t, err)
	found := 0
	for _, b := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if !strings.Contains(b[1], "alerts:") {
			continue
		}
		found++
		cfg, err := Parse([]byte("sources: [{name: stripe, provider: stripe, secrets: [whsec_x]},"+
			" {name: orders, kafka: {brokers: ['kafka-1:9092'], topics: [orders.confirmed]}}]\n"+b[1]),
			func(name string) (string, bool) {
				return "https://hooks.slack.example/T0/B0/x", name == "OPS_SLACK_WEBHOOK_URL"
			})
		require.NoError(t, err, b[1])
		require.Len(t, cfg.Alerts.Rules, 6)
	}
	require.Equal(t, 1, found)
}
