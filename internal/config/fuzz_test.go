package config

import (
	"strings"
	"testing"
)

// readmeConfig is the example in docs/configuration.md.
const readmeConfig = `listen: ":8080"                      # env HOOKINBOX_LISTEN overrides
database_url: "${DATABASE_URL}"      # empty → embedded PostgreSQL; env DATABASE_URL overrides
data_dir: ".hookinbox"               # embedded PostgreSQL lives in <data_dir>/pg
max_body_bytes: 5242880              # larger bodies → 413, nothing stored
read_timeout: 10s                    # a request (headers + body) must arrive within this
shutdown_timeout: 20s                # graceful part of shutdown
sources:
  - name: github                      # route: POST /webhooks/github
    provider: github                  # github | stripe | standard | hmac | a preset ("Providers")
    secrets: ["${GITHUB_WEBHOOK_SECRET}", "old-secret"]   # any one may match: rotation
  - name: stripe
    provider: stripe
    secrets: ["whsec_..."]
    tolerance: 5m                      # providers that sign a time: its max age, past or future
  - name: billing
    provider: standard
    secrets: ["whsec_<base64>"]
    forward_url: "https://internal.example.com/billing-events"   # optional
    resource_field: data.id                                     # optional
downstream:                          # the shipped payment saga's calls (optional)
  fulfillment_url: http://127.0.0.1:9090/fulfill
  payments_url: http://127.0.0.1:9090
  timeout: 10s
`

// FuzzParse: Parse never panics, whatever the file holds.
func FuzzParse(f *testing.F) {
	f.Add([]byte(readmeConfig))
	f.Add([]byte(strings.ReplaceAll(readmeConfig, "tolerance: 5m", "tolerance: 30d")))
	f.Add([]byte(strings.ReplaceAll(readmeConfig, "read_timeout: 10s", "read_timeout: ${READ_TIMEOUT:-15s}")))
	f.Add([]byte(strings.ReplaceAll(readmeConfig, "tolerance: 5m", "tolerance: soon")))
	f.Add([]byte(strings.ReplaceAll(readmeConfig, "provider: stripe", "provider: paypal")))
	f.Add([]byte(strings.ReplaceAll(readmeConfig, "listen:", "lisen:")))
	f.Add([]byte(readmeConfig + `retention:
  inbox: 1d
admin:
  listen: 127.0.0.1:8081
  token: "${ADMIN_TOKEN:-dev}"
  idempotency_ttl: 24h
jobs: {max_workers: 10, timeout: 1m, rescue_stuck_after: 2m, batch_size: 1, batch_window: 0s}
ingest: {batch_window: 0s, batch_max: 50}
log: {format: json, level: debug}
`))
	f.Add([]byte("base: &s {name: a, provider: github, secrets: [x]}\nsources: [*s, *s]\n"))
	f.Add([]byte("sources:\n  - name: gh\n    provider: github\n    secrets: [s]\n    github: {repo: acme/web, hook_id: 1, token: t, redeliver_every: 1h}\n"))
	f.Add([]byte(""))
	f.Add([]byte("# only a comment\n"))
	f.Add([]byte("--- \n...\n"))
	f.Add([]byte("listen: [unclosed\n"))
	f.Add([]byte("max_body_bytes: ${X:-abc}\n"))
	none := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = Parse(raw, none)
	})
}

// FuzzParseDuration: ParseDuration never panics and never gives a
// negative duration (a day count past time.Duration's range once wrapped).
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "72h", "1h30m", "0d", "-1d", "106751d", "106752d", "9223372036854775807d", "1.5d", " 5m "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
	})
}
