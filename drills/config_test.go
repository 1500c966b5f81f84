package drills

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox/internal/testproc"
)

// Secrets and token of the drill's hookinbox. The generator signs with the
// same ones.
var (
	githubSecret  = "drill-github-secret"
	stripeSecret  = "whsec_drill_stripe_secret"
	billingSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("drill-billing-secret-32-bytes!!!"))
	adminToken    = "drill-admin-token"
)

// serveConfig is what a drill may vary in hookinbox.yaml.
type serveConfig struct {
	DatabaseURL       string
	DownstreamURL     string        // the stub's base URL
	ReadTimeout       time.Duration // default 10s
	MaxBodyBytes      int           // default 1 MiB
	DownstreamTimeout time.Duration // default 5s
	JobTimeout        time.Duration // jobs.timeout; unset: hookinbox's default
	RescueStuckAfter  time.Duration // jobs.rescue_stuck_after; unset: hookinbox's default
	// GitHubForward gives the github source a forward_url at the stub's
	// /forward: destination github-forward (config.ForwardDestination),
	// whose effects the audit expects under githubForwardKey.
	GitHubForward bool
	// KafkaBrokers, when set, adds source orders reading topic kafkaTopic
	// from these brokers (event ids in header event_id), forwarded to the
	// stub's kafkaForwardPath.
	KafkaBrokers string
}

// writeConfig writes a hookinbox.yaml listening on the given loopback
// addresses and returns its path. It is marshalled, not templated, so no
// value (a password in the URL) can change the file's structure.
func writeConfig(t testing.TB, dir string, c serveConfig, listen, adminListen string) string {
	t.Helper()
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 10 * time.Second
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.DownstreamTimeout == 0 {
		c.DownstreamTimeout = 5 * time.Second
	}
	type source struct {
		Name       string         `yaml:"name"`
		Provider   string         `yaml:"provider,omitempty"`
		Secrets    []string       `yaml:"secrets,omitempty"`
		Tolerance  string         `yaml:"tolerance,omitempty"`
		ForwardURL string         `yaml:"forward_url,omitempty"`
		Kafka      map[string]any `yaml:"kafka,omitempty"`
	}
	github := source{Name: "github", Provider: "github", Secrets: []string{githubSecret}}
	if c.GitHubForward {
		github.ForwardURL = c.DownstreamURL + "/forward"
	}
	sources := []source{
		github,
		{Name: "stripe", Provider: "stripe", Secrets: []string{stripeSecret}, Tolerance: "5m"},
		{Name: "billing", Provider: "standard", Secrets: []string{billingSecret}, Tolerance: "5m",
			ForwardURL: c.DownstreamURL + "/forward"},
	}
	if c.KafkaBrokers != "" {
		sources = append(sources, source{Name: "orders", ForwardURL: c.DownstreamURL + kafkaForwardPath, Kafka: map[string]any{
			"brokers": []string{c.KafkaBrokers}, "topics": []string{kafkaTopic}, "delivery_id": "header:event_id", "start": "earliest",
			// A killed process's partitions move after this, not Kafka's 45s.
			"session_timeout": "6s"}})
	}
	doc := map[string]any{
		"listen":           listen,
		"database_url":     c.DatabaseURL,
		"max_body_bytes":   c.MaxBodyBytes,
		"read_timeout":     c.ReadTimeout.String(),
		"shutdown_timeout": "5s",
		"sources":          sources,
		"downstream": map[string]string{
			"fulfillment_url": c.DownstreamURL + "/fulfill",
			"payments_url":    c.DownstreamURL,
			"timeout":         c.DownstreamTimeout.String(),
		},
		"admin": map[string]string{"listen": adminListen, "token": adminToken},
	}
	if c.JobTimeout > 0 {
		doc["jobs"] = map[string]string{"timeout": c.JobTimeout.String(), "rescue_stuck_after": c.RescueStuckAfter.String()}
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hookinbox.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// freeAddr returns a loopback address with a port that was free a moment
// ago. Another process may take it before hookinbox binds it; startProc
// then tries new ports.
func freeAddr(t testing.TB) string { return testproc.FreeAddr(t) }
