package config

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseDefaultsAndExpansion(t *testing.T) {
	t.Parallel()
	raw := []byte(`
database_url: "${DATABASE_URL}"
sources:
  - name: github
    provider: github
    secrets: ["${GH_SECRET}", "${GH_OLD}", "${GH_DEFAULTED:-fallback}"]
  - name: stripe
    provider: stripe
    secrets: ["whsec_x\"quoted: yes"]
    tolerance: 90s
`)
	cfg, err := Parse(raw, envOf(map[string]string{"GH_SECRET": "s3cr3t: with colon", "HOOKINBOX_LISTEN": "127.0.0.1:9999"}))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9999", cfg.Listen, "env overrides the file")
	require.Equal(t, "", cfg.DatabaseURL)
	require.Equal(t, DefaultMaxBodyBytes, cfg.MaxBodyBytes)
	require.Equal(t, DefaultReadTimeout, cfg.ReadTimeout.Std())
	require.Equal(t, []string{"s3cr3t: with colon", "fallback"}, cfg.Sources[0].Secrets, "unset refs are dropped, defaults applied, values never re-parsed as YAML")
	require.Equal(t, 5*time.Minute, cfg.Sources[0].Tolerance.Std())
	require.Equal(t, []string{`whsec_x"quoted: yes`}, cfg.Sources[1].Secrets)
	require.Equal(t, 90*time.Second, cfg.Sources[1].Tolerance.Std())
	require.Equal(t, DefaultAdminListen, cfg.Admin.Listen)
	require.Equal(t, 24*time.Hour, cfg.Admin.IdempotencyTTL.Std())
	require.Equal(t, SignIn{Burst: 10, Every: Duration(time.Second)}, cfg.Admin.SignIn)
	require.Equal(t, 8*time.Millisecond, cfg.Ingest.BatchWindow.Std(), "ingest batching is on by default")
	require.Equal(t, 200, cfg.Jobs.BatchSize)
	require.Equal(t, DefaultLogDeliveriesPerSecond, *cfg.Log.DeliveriesPerSecond)

	cfg, err = Parse(raw, envOf(map[string]string{"GH_SECRET": "x", "DATABASE_URL": "postgres://db/x"}))
	require.NoError(t, err)
	require.Equal(t, "postgres://db/x", cfg.DatabaseURL)
	require.Equal(t, DefaultListen, cfg.Listen)
}

// An explicit 0 logs every delivery rather than meaning "default".
func TestLogDeliveriesPerSecondZeroIsEveryLine(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("log: {deliveries_per_second: 0}\n"), envOf(nil))
	require.NoError(t, err)
	require.Zero(t, *cfg.Log.DeliveriesPerSecond)
}

// An explicit 0 turns ingest batching off rather than meaning "default".
func TestIngestBatchWindowZeroIsOff(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("ingest: {batch_window: 0s}\n"), envOf(nil))
	require.NoError(t, err)
	require.Zero(t, cfg.Ingest.BatchWindow.Std())
}

func TestParseErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, yaml, want string }{
		{"unknown provider", "sources: [{name: a, provider: acme, secrets: [x]}]", `sources[0] (a).provider: unknown provider "acme" (want one of bitbucket, checkout, `},
		{"hmac without block", "sources: [{name: a, provider: hmac, secrets: [x]}]", `sources[0] (a).hmac: required for provider hmac`},
		{"hmac block on github", "sources: [{name: a, provider: github, secrets: [x], hmac: {signature_header: X-Sig}}]", `sources[0] (a).hmac: only hmac sources take an hmac block`},
		{"hmac without header", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {id: {header: X-Id}, event_type: {json: type}}}]", `sources[0] (a).hmac.signature_header: required`},
		{"hmac bad algorithm", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_header: X-Sig, algorithm: md5, id: {header: X-Id}, event_type: {json: type}}}]", `sources[0] (a).hmac.algorithm: "md5" (want sha1, sha256 or sha512)`},
		{"hmac bad template", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_header: X-Sig, signed_content: '{ts}.{body}', id: {header: X-Id}, event_type: {json: type}}}]", `sources[0] (a).hmac.signed_content: unknown placeholder {ts}`},
		{"hmac url without notification_url", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_header: X-Sig, signed_content: '{url}{body}', id: {header: X-Id}, event_type: {json: type}}}]", `sources[0] (a).notification_url: required: hmac.signed_content signs {url}`},
		{"hmac without id", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_header: X-Sig, event_type: {json: type}}}]", `sources[0] (a).hmac.id: required`},
		{"hmac bad unit", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_header: X-Sig, id: {header: X-Id}, event_type: {json: type}, timestamp: {header: X-Ts, unit: us}}}]", `sources[0] (a).hmac.timestamp.unit: "us" (want s or ms)`},
		{"hmac unsigned timestamp claimed signed", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_header: X-Sig, id: {header: X-Id}, event_type: {json: type}, timestamp: {header: X-Ts, signed: true}}}]", `sources[0] (a).hmac.timestamp.signed: the timestamp is in X-Ts header, which signed_content does not hold`},
		{"hmac misspelt key", "sources: [{name: a, provider: hmac, secrets: [x], hmac: {signature_heder: X-Sig}}]", `field signature_heder not found`},
		{"hmac secret not base64", "sources: [{name: a, provider: hmac, secrets: ['!!'], hmac: {signature_header: X-Sig, secret_encoding: base64, id: {header: X-Id}, event_type: {json: type}}}]", `sources[0] (a).secrets: secret 1 of 1 is not a base64 secret`},
		{"paypal without block", "sources: [{name: p, provider: paypal}]", `sources[0] (p).paypal: required for provider paypal`},
		{"paypal without webhook id", "sources: [{name: p, provider: paypal, paypal: {client_id: c, client_secret: s}}]", `sources[0] (p).paypal.webhook_id: required`},
		{"paypal block on stripe", "sources: [{name: p, provider: stripe, secrets: [x], paypal: {client_id: c}}]", `sources[0] (p).paypal: only paypal sources take a paypal block`},
		{"twilio without notification_url", "sources: [{name: t, provider: twilio, secrets: [x]}]", `sources[0] (t).notification_url: required for twilio`},
		{"discord key not hex", "sources: [{name: d, provider: discord, secrets: [x]}]", `sources[0] (d).secrets: secret 1 of 1 is not the application's public key`},
		{"relative notification_url", "sources: [{name: a, provider: github, secrets: [x], notification_url: '/x'}]", `sources[0] (a).notification_url: "/***" is not an absolute`},
		{"no secrets", "sources: [{name: a, provider: github, secrets: []}]", `sources[0] (a).secrets: no non-empty secret`},
		{"only unset secrets", "sources: [{name: a, provider: github, secrets: [\"${NOPE}\"]}]", `sources[0] (a).secrets: no non-empty secret`},
		{"duplicate name", "sources: [{name: a, provider: github, secrets: [x]}, {name: a, provider: stripe, secrets: [y]}]", `sources[1] (a).name: duplicate source name`},
		{"bad name", "sources: [{name: A/b, provider: github, secrets: [x]}]", `sources[0].name: "A/b" must match`},
		{"bad duration", "sources:\n  - name: a\n    provider: stripe\n    secrets: [x]\n    tolerance: 5 minutes\n", `sources[0].tolerance: invalid duration "5 minutes"`},
		{"bad top-level duration", "read_timeout: soon\n", `read_timeout: invalid duration "soon"`},
		{"unknown key", "listne: ':1'\n", `field listne not found`},
		{"forward_url clashing with a destination", "sources: [{name: a, provider: github, secrets: [x], forward_url: 'http://x'}]\ndestinations: [{name: a-forward, url: 'http://y'}]", `sources[0] (a).forward_url: stands for destination "a-forward"`},
		{"destination bad schedule", "destinations: [{name: a, url: 'http://x', retry: {schedule: [5s, soon]}}]", `destinations[0].retry.schedule[1]: invalid duration "soon"`},
		{"relative forward_url", "sources: [{name: a, provider: standard, secrets: [eA==], forward_url: '/x'}]", `sources[0] (a).forward_url: "/***" is not an absolute http(s) URL`},
		{"redacted headers not a list", "sources: [{name: a, provider: github, secrets: [x], redact_headers: X-Api-Key}]", `cannot unmarshal`},
		{"empty redacted header", "sources: [{name: a, provider: github, secrets: [x], redact_headers: [X-Api-Key, '']}]", `sources[0] (a).redact_headers[1]: empty header name`},
		{"redacted header not a name", "sources: [{name: a, provider: github, secrets: [x], redact_headers: ['X-Api-Key: v']}]", `sources[0] (a).redact_headers[0]: "X-Api-Key: v" is not a header name`},
		{"kafka redacted header not a name", "sources: [{name: k, kafka: {brokers: ['k:9092'], topics: [t]}, redact_headers: ['X Key']}]", `sources[0] (k).redact_headers[0]: "X Key" is not a header name`},
		{"bad downstream url", "downstream: {fulfillment_url: 'ftp://x'}", `downstream.fulfillment_url: "ftp://x" is not`},
		{"cancelled jobs kept shorter than the sweep's grace", "retention: {river_cancelled: 5m}\njobs: {orphan_grace: 5m}", `retention.river_cancelled: 5m0s must be at least twice jobs.orphan_grace (5m0s)`},
		{"bad url with a secret", "downstream: {payments_url: 'ftp://u:pa55@x/?key=s3cret'}", `downstream.payments_url: "ftp://***@x/?key=***" is not`},
		{"github block on stripe", "sources: [{name: a, provider: stripe, secrets: [x], github: {token: t, repo: o/r, hook_id: 1}}]", `sources[0] (a).github: only github sources`},
		{"short global retention", "retention: {inbox: 48h}\nsources: [{name: a, provider: github, secrets: [x]}]", `retention.inbox: 48h0m0s keeps a's deliveries less than 72h0m0s`},
		{"short source retention", "sources: [{name: a, provider: stripe, secrets: [x], retention: 2d}]", `sources[0] (a).retention: 48h0m0s keeps`},
		{"bad log format", "log: {format: xml}", `log.format: "xml"`},
		{"negative delivery lines", "log: {deliveries_per_second: -1}", `log.deliveries_per_second: -1 (want 0`},
		{"long ingest batch window", "ingest: {batch_window: 1s}", `ingest.batch_window: must be between 0 (no batching) and 100ms`},
		{"zero jobs batch", "jobs: {batch_size: -1}", `jobs.batch_size: must be between 1 (no batching)`},
		{"negative sign-in burst", "admin: {sign_in: {burst: -1}}", `admin.sign_in.burst: -1 (want 1 or more`},
		{"sign-in every too long", "admin: {sign_in: {every: 2h}}", `admin.sign_in.every: 2h0m0s (want between 1ms and 1h)`},
		{"bad standard secret", "sources: [{name: a, provider: standard, secrets: [\"whsec_!!notbase64\"]}]", `sources[0] (a).secrets:`},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.yaml), envOf(nil))
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func TestShortRetentionNeedsConsent(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("retention: {inbox: 10d}\nsources: [{name: a, provider: github, secrets: [x], retention: 1d, allow_short_retention: true}, {name: b, provider: stripe, secrets: [y]}]"), envOf(nil))
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, cfg.InboxRetention(cfg.Sources[0]))
	require.Equal(t, 10*24*time.Hour, cfg.InboxRetention(cfg.Sources[1]))
	require.Equal(t, 5000, cfg.Retention.BatchSize)
	require.Equal(t, 24*time.Hour, cfg.Retention.RiverCompleted.Std())
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "72h": 72 * time.Hour, "5m": 5 * time.Minute, "1h30m": 90 * time.Minute} {
		got, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	// 106752d is past time.Duration's ~292 years: it wrapped to a negative.
	for _, in := range []string{"", "d", "-1d", "1.5d", "-5m", "soon", "106752d", "99999999999d"} {
		_, err := ParseDuration(in)
		require.Error(t, err, in)
	}
}

// The committed hookinbox.yaml must work out of the box.
func TestCommittedConfigLoads(t *testing.T) {
	t.Parallel()
	cfg, err := Load(filepath.Join("..", "..", "hookinbox.yaml"), envOf(nil))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", cfg.Listen, "its secrets are public: loopback only")
	for _, name := range []string{"github", "stripe", "billing"} {
		s, ok := cfg.Source(name)
		require.True(t, ok, name)
		require.NotEmpty(t, s.Secrets, name)
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), envOf(nil))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The image's config has no default secrets: it loads with the variables
// the deploy files set, and names the key when one is missing.
func TestDeployConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "deploy", "hookinbox.yaml")
	env := map[string]string{"DATABASE_URL": "postgres://db/x", "HOOKINBOX_ADMIN_TOKEN": "t",
		"GITHUB_WEBHOOK_SECRET": "g", "STRIPE_WEBHOOK_SECRET": "whsec_s"}
	cfg, err := Load(path, envOf(env))
	require.NoError(t, err)
	require.Equal(t, "json", cfg.Log.Format)
	require.Equal(t, "0.0.0.0:8081", cfg.Admin.Listen)
	require.Equal(t, []string{"hookinbox", "hookinbox-admin"}, cfg.Admin.Hosts, "the compose and Kubernetes service names")
	env["HOOKINBOX_ADMIN_HOSTS"] = "hookinbox-admin, hookinbox-admin.ops.svc,"
	cfg, err = Load(path, envOf(env))
	require.NoError(t, err)
	require.Equal(t, []string{"hookinbox-admin", "hookinbox-admin.ops.svc"}, cfg.Admin.Hosts)
	delete(env, "HOOKINBOX_ADMIN_HOSTS")
	require.Less(t, cfg.ShutdownTimeout.Std()+5*time.Second, 60*time.Second, "fits terminationGracePeriodSeconds")

	delete(env, "STRIPE_WEBHOOK_SECRET")
	_, err = Load(path, envOf(env))
	require.ErrorContains(t, err, "sources[1] (stripe).secrets: no non-empty secret")
}

// Every deploy manifest is well-formed YAML (multi-document included).
func TestDeployManifestsParse(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "*", "*.yaml"))
	require.NoError(t, err)
	compose, _ := filepath.Glob(filepath.Join("..", "..", "deploy", "*.yml"))
	files = append(files, compose...)
	require.GreaterOrEqual(t, len(files), 5)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var doc map[string]any
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, f)
		}
	}
}

// A bare port is taken by net.Listen for a host name, and the error it
// gives ("lookup 8080: no such host") names neither the key nor the fix.
func TestListenMustBeHostPort(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		env        map[string]string
		want       string
	}{
		{"bare port", `listen: "8080"`, nil, `listen: "8080" is not host:port; did you mean ":8080"?`},
		{"bare admin port", `admin: {listen: "8081"}`, nil, `admin.listen: "8081" is not host:port; did you mean ":8081"?`},
		{"host without port", `listen: localhost`, nil, `listen: "localhost" is not host:port (e.g. ":8080" or "127.0.0.1:8080")`},
		{"port not a number", `listen: "127.0.0.1:eighty"`, nil, `listen: "127.0.0.1:eighty": the port must be a number from 0 to 65535`},
		{"from the environment", ``, map[string]string{"HOOKINBOX_LISTEN": "9000"}, `listen: "9000" is not host:port; did you mean ":9000"? (set by HOOKINBOX_LISTEN)`},
		{"admin from the environment", ``, map[string]string{"HOOKINBOX_ADMIN_LISTEN": "9001"}, `admin.listen: "9001" is not host:port; did you mean ":9001"? (set by HOOKINBOX_ADMIN_LISTEN)`},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.yaml), envOf(tc.env))
		require.Error(t, err, tc.name)
		require.Equal(t, tc.want, err.Error(), tc.name)
	}
	for _, ok := range []string{":8080", "127.0.0.1:0", "[::1]:8080", "0.0.0.0:65535"} {
		_, err := Parse([]byte("listen: \""+ok+"\""), envOf(nil))
		require.NoError(t, err, ok)
	}
}

// The app: section is carried untouched (but for ${VAR} expansion) for a
// program built on hookinbox to decode.
func TestAppSection(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("app:\n  chat_url: \"${CHAT_URL}\"\n  channels: [ops, dev]\n  retries: 3\n"), envOf(map[string]string{"CHAT_URL": "https://chat.example/hook"}))
	require.NoError(t, err)
	require.False(t, cfg.App.IsZero())
	var app struct {
		ChatURL  string   `yaml:"chat_url"`
		Channels []string `yaml:"channels"`
		Retries  int      `yaml:"retries"`
	}
	require.NoError(t, cfg.App.Decode(&app))
	require.Equal(t, "https://chat.example/hook", app.ChatURL)
	require.Equal(t, []string{"ops", "dev"}, app.Channels)
	require.Equal(t, 3, app.Retries)

	var wrong struct {
		ChatURL string `yaml:"chat_url"`
	}
	require.ErrorContains(t, cfg.App.Decode(&wrong), "field channels not found", "unknown keys are errors")

	empty, err := Parse([]byte("listen: ':1'\n"), envOf(nil))
	require.NoError(t, err)
	require.True(t, empty.App.IsZero())
	require.NoError(t, empty.App.Decode(&app), "no section: nothing to decode")
}

func TestRedactHeaderNames(t *testing.T) {
	t.Parallel()
	require.NoError(t, CheckRedactHeaders([]string{"X-Api-Key", "x-custom_token.v2", "!#$%&'*+-.^_`|~"}))
	require.ErrorContains(t, CheckRedactHeaders([]string{"Ünïcode"}), `[0]: "Ünïcode" is not a header name`)
}
