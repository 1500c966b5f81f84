package verify

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testNow is the injected clock of every verifier test.
var testNow = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// verifyErrors are the sentinels a Verify error must match exactly one of.
var verifyErrors = []error{ErrMissingHeader, ErrInvalidPayload, ErrInvalidSignature, ErrTimestampOutOfTolerance, ErrUnavailable}

// requireVerifyErr checks that err matches want and none of the other
// Verify sentinels, and that its message leaks none of the given secrets
// (secrets and the signatures we computed).
func requireVerifyErr(t *testing.T, err, want error, leaks ...string) {
	t.Helper()
	require.ErrorIs(t, err, want)
	for _, other := range verifyErrors {
		if other != want {
			require.NotErrorIs(t, err, other)
		}
	}
	for _, leak := range leaks {
		if leak != "" {
			require.NotContains(t, err.Error(), leak, "error message leaks a secret or expected signature")
		}
	}
}

// verifyCase is one row of the per-provider Verify tables. edit changes a
// validly signed request; a nil edit leaves it alone.
type verifyCase struct {
	name      string
	secrets   []string      // defaults to the provider's test secret
	tolerance time.Duration // Config.Tolerance
	edit      func(body []byte, h http.Header) []byte
	now       time.Time // defaults to testNow
	want      Delivery
	wantErr   error
	wantMsg   string // substring of the error message
}

func newTestVerifier(t *testing.T, provider string, secrets []string, now time.Time) Verifier {
	t.Helper()
	v, err := New(Config{Provider: provider, Secrets: secrets, Now: func() time.Time { return now }})
	require.NoError(t, err)
	return v
}

// runVerifyCases signs body with signer at testNow, applies each case's
// edit and checks Verify's result.
func runVerifyCases(t *testing.T, provider string, secret string, signer Signer, body []byte, msg Message, cases []verifyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			header, err := signer.Sign(body, msg, testNow)
			require.NoError(t, err)
			reqBody := append([]byte(nil), body...)
			if tc.edit != nil {
				reqBody = tc.edit(reqBody, header)
			}
			secrets := tc.secrets
			if secrets == nil {
				secrets = []string{secret}
			}
			now := tc.now
			if now.IsZero() {
				now = testNow
			}

			v, err := New(Config{Provider: provider, Secrets: secrets, Tolerance: tc.tolerance, Now: func() time.Time { return now }})
			require.NoError(t, err)
			got, err := v.Verify(reqBody, header)
			if tc.wantErr != nil {
				requireVerifyErr(t, err, tc.wantErr, signatureLeaks(provider, secrets, reqBody, header)...)
				if tc.wantMsg != "" {
					require.ErrorContains(t, err, tc.wantMsg)
				}
				require.Zero(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// signatureLeaks lists what an error must never contain: each secret and
// the signature each secret would produce for this request.
func signatureLeaks(provider string, secrets []string, body []byte, h http.Header) []string {
	leaks := append([]string{}, secrets...)
	for _, s := range secrets {
		switch provider {
		case ProviderGitHub:
			leaks = append(leaks, hex.EncodeToString(signHMAC([]byte(s), body)))
		case ProviderStripe:
			ts := testNow.Unix()
			if t, _, err := parseStripeSignature(h.Get(stripeSignatureHeader)); err == nil {
				ts = t
			}
			leaks = append(leaks, hex.EncodeToString(stripeMAC([]byte(s), ts, body)))
		case ProviderStandard:
			key, err := standardKey(s)
			if err != nil {
				continue
			}
			ts, ok := parseUnixSeconds(h.Get(standardTimestampHeader))
			if !ok {
				ts = testNow.Unix()
			}
			mac := standardMAC(key, h.Get(standardIDHeader), ts, body)
			leaks = append(leaks, base64.StdEncoding.EncodeToString(mac))
		}
	}
	return leaks
}

// withHeader returns an edit that sets (or, for "", deletes) one header.
func withHeader(name, value string) func([]byte, http.Header) []byte {
	return func(body []byte, h http.Header) []byte {
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return body
	}
}

// withBody returns an edit that swaps the body after signing.
func withBody(body string) func([]byte, http.Header) []byte {
	return func([]byte, http.Header) []byte { return []byte(body) }
}

func TestNew(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		cfg     Config
		wantErr error  // sentinel, or nil with wantMsg for a plain error
		wantMsg string // substring of the error message
	}{
		{name: "github", cfg: Config{Provider: ProviderGitHub, Secrets: []string{"gh-secret"}}},
		{name: "stripe", cfg: Config{Provider: ProviderStripe, Secrets: []string{"whsec_stripe-secret"}}},
		{name: "standard", cfg: Config{Provider: ProviderStandard, Secrets: []string{"whsec_c2VjcmV0"}}},
		{name: "standard bare base64", cfg: Config{Provider: ProviderStandard, Secrets: []string{"c2VjcmV0"}}},
		{name: "empty secrets skipped", cfg: Config{Provider: ProviderGitHub, Secrets: []string{"", "gh-secret", ""}}},
		{name: "unknown provider", cfg: Config{Provider: "acme", Secrets: []string{"gl-secret"}}, wantErr: ErrUnknownProvider, wantMsg: `"acme"`},
		{name: "provider is case sensitive", cfg: Config{Provider: "GitHub", Secrets: []string{"gh-secret"}}, wantErr: ErrUnknownProvider},
		{name: "no secrets", cfg: Config{Provider: ProviderGitHub}, wantErr: ErrNoSecrets},
		{name: "only empty secrets", cfg: Config{Provider: ProviderStripe, Secrets: []string{"", ""}}, wantErr: ErrNoSecrets},
		{name: "negative tolerance", cfg: Config{Provider: ProviderStripe, Secrets: []string{"whsec_stripe-secret"}, Tolerance: -time.Second}, wantMsg: "tolerance"},
		{name: "standard secret not base64", cfg: Config{Provider: ProviderStandard, Secrets: []string{"whsec_c2VjcmV0", "whsec_not*base64!"}}, wantMsg: "secret 2 of 2"},
		{name: "standard secret empty key", cfg: Config{Provider: ProviderStandard, Secrets: []string{"whsec_"}}, wantMsg: "empty key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			v, err := New(tt.cfg)
			if tt.wantErr == nil && tt.wantMsg == "" {
				require.NoError(t, err)
				require.NotNil(t, v)
				return
			}
			require.Error(t, err)
			require.Nil(t, v)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			}
			require.ErrorContains(t, err, tt.wantMsg)
			for _, s := range tt.cfg.Secrets {
				if s != "" {
					require.NotContains(t, err.Error(), s)
				}
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()

	secrets := []string{"a", "", "b"}
	cfg := Config{Provider: ProviderGitHub, Secrets: secrets}.withDefaults()
	require.Equal(t, DefaultTolerance, cfg.Tolerance)
	require.NotNil(t, cfg.Now)
	require.Equal(t, []string{"a", "b"}, cfg.Secrets)

	// The defaulted copy must not alias the caller's slice.
	secrets[0] = "changed"
	require.Equal(t, []string{"a", "b"}, cfg.Secrets)

	cfg = Config{Tolerance: time.Second}.withDefaults()
	require.Equal(t, time.Second, cfg.Tolerance)
}

// TestToleranceDefault checks that a zero Config.Tolerance means
// DefaultTolerance end to end, on both sides of the boundary.
func TestToleranceDefault(t *testing.T) {
	t.Parallel()

	signer, err := NewSigner(ProviderStripe, stripeTestSecret)
	require.NoError(t, err)
	body := []byte(stripeTestBody)
	header, err := signer.Sign(body, Message{}, testNow)
	require.NoError(t, err)

	for _, tt := range []struct {
		name    string
		now     time.Time
		wantErr error
	}{
		{name: "at the bound", now: testNow.Add(DefaultTolerance)},
		{name: "past the bound", now: testNow.Add(DefaultTolerance + time.Second), wantErr: ErrTimestampOutOfTolerance},
		{name: "future at the bound", now: testNow.Add(-DefaultTolerance)},
		{name: "future past the bound", now: testNow.Add(-DefaultTolerance - time.Second), wantErr: ErrTimestampOutOfTolerance},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			_, err := newTestVerifier(t, ProviderStripe, []string{stripeTestSecret}, tt.now).Verify(body, header)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			requireVerifyErr(t, err, tt.wantErr)
		})
	}
}

func TestNewSigner(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		provider string
		secret   string
		wantErr  error
		wantMsg  string
	}{
		{name: "github", provider: ProviderGitHub, secret: "s"},
		{name: "stripe", provider: ProviderStripe, secret: "whsec_s"},
		{name: "standard", provider: ProviderStandard, secret: "whsec_c2VjcmV0"},
		{name: "unknown provider", provider: "acme", secret: "s", wantErr: ErrUnknownProvider},
		{name: "empty secret", provider: ProviderGitHub, wantErr: ErrNoSecrets},
		{name: "standard secret not base64", provider: ProviderStandard, secret: "whsec_%%%", wantMsg: "base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			s, err := NewSigner(tt.provider, tt.secret)
			if tt.wantErr == nil && tt.wantMsg == "" {
				require.NoError(t, err)
				require.NotNil(t, s)
				return
			}
			require.Error(t, err)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			}
			require.ErrorContains(t, err, tt.wantMsg)
		})
	}
}

// TestSignZeroTime checks that a zero now means the current time, so a
// freshly signed request verifies against the real clock.
func TestSignZeroTime(t *testing.T) {
	t.Parallel()

	for _, p := range []struct{ provider, secret, body string }{
		{ProviderStripe, stripeTestSecret, stripeTestBody},
		{ProviderStandard, standardTestSecret, standardTestBody},
	} {
		t.Run(p.provider, func(t *testing.T) {
			t.Parallel()

			signer, err := NewSigner(p.provider, p.secret)
			require.NoError(t, err)
			header, err := signer.Sign([]byte(p.body), Message{ID: "msg_1"}, time.Time{})
			require.NoError(t, err)
			v, err := New(Config{Provider: p.provider, Secrets: []string{p.secret}})
			require.NoError(t, err)
			_, err = v.Verify([]byte(p.body), header)
			require.NoError(t, err)

			_, err = signer.Sign([]byte(p.body), Message{ID: "msg_1"}, time.Unix(-1, 0))
			require.ErrorContains(t, err, "before 1970")
		})
	}
}

func TestCheckID(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		value   string
		wantMsg string // empty when valid
	}{
		{name: "guid", value: "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
		{name: "one byte", value: "x"},
		{name: "max length", value: strings.Repeat("a", MaxIDLength)},
		{name: "max length multibyte", value: strings.Repeat("é", MaxIDLength/2)},
		{name: "unicode", value: "événement.créé"},
		{name: "empty", value: "", wantMsg: "is empty"},
		{name: "too long", value: strings.Repeat("a", MaxIDLength+1), wantMsg: "256 bytes long (max 255)"},
		{name: "too long multibyte", value: strings.Repeat("é", MaxIDLength/2+1), wantMsg: "max 255"},
		{name: "NUL", value: "evt\x00", wantMsg: "control character"},
		{name: "newline", value: "evt\n1", wantMsg: "control character"},
		{name: "tab", value: "evt\t1", wantMsg: "control character"},
		{name: "DEL", value: "evt\x7f", wantMsg: "control character"},
		{name: "C1 control", value: "evt\u0085", wantMsg: "control character"},
		{name: "invalid UTF-8", value: "evt\xff", wantMsg: "not valid UTF-8"},
		{name: "truncated UTF-8", value: "\xc3", wantMsg: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			err := checkID("delivery id", tt.value)
			if tt.wantMsg == "" {
				require.NoError(t, err)
				return
			}
			requireVerifyErr(t, err, ErrInvalidPayload)
			require.ErrorContains(t, err, "invalid payload: delivery id ")
			require.ErrorContains(t, err, tt.wantMsg)
		})
	}
}

func TestParseUnixSeconds(t *testing.T) {
	t.Parallel()

	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{in: "1709294400", want: 1709294400, wantOK: true},
		{in: "0", want: 0, wantOK: true},
		{in: ""},
		{in: "-1"},
		{in: "+1709294400"},
		{in: "01709294400"},
		{in: " 1709294400"},
		{in: "1709294400.5"},
		{in: "1e9"},
		{in: "99999999999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()

			got, ok := parseUnixSeconds(tt.in)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestCheckTolerance(t *testing.T) {
	t.Parallel()

	now := time.Unix(1_700_000_000, 500_000_000) // half a second past
	tests := []struct {
		name    string
		ts      int64
		tol     time.Duration
		wantMsg string // empty when within tolerance
	}{
		{name: "same second", ts: 1_700_000_000, tol: time.Minute},
		{name: "past edge", ts: 1_700_000_000 - 59, tol: time.Minute},
		{name: "future edge", ts: 1_700_000_000 + 60, tol: time.Minute},
		{name: "past", ts: 1_700_000_000 - 600, tol: time.Minute, wantMsg: "is 10m1s in the past (tolerance 1m0s)"},
		{name: "future", ts: 1_700_000_000 + 3600, tol: time.Minute, wantMsg: "is 1h0m0s in the future (tolerance 1m0s)"},
		{name: "just past a whole second", ts: 1_700_000_000 - 60, tol: time.Minute, wantMsg: "is 1m1s in the past (tolerance 1m0s)"},
		{name: "epoch", ts: 0, tol: time.Minute, wantMsg: "in the past"},
		{name: "far future does not wrap to the past", ts: 1<<63 - 1, tol: time.Minute, wantMsg: "in the future"},
		{name: "far past does not wrap to the future", ts: -1 << 63, tol: time.Minute, wantMsg: "in the past"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			err := checkTolerance("t", tt.ts, now, tt.tol)
			if tt.wantMsg == "" {
				require.NoError(t, err)
				return
			}
			requireVerifyErr(t, err, ErrTimestampOutOfTolerance)
			require.ErrorContains(t, err, tt.wantMsg)
			require.NotContains(t, err.Error(), "is -", "saturated durations must not wrap negative")
		})
	}
}

func TestHeaderValue(t *testing.T) {
	t.Parallel()

	canonical := http.Header{}
	canonical.Set("webhook-id", "msg_1")
	require.Equal(t, "msg_1", headerValue(canonical, "webhook-id"))
	require.Equal(t, "msg_1", headerValue(canonical, "Webhook-Id"))

	// Filled by map assignment, as an adapter from another HTTP stack might.
	raw := http.Header{"webhook-id": {"msg_2"}, "x-github-event": {"push"}, "empty": {}}
	require.Equal(t, "msg_2", headerValue(raw, "webhook-id"))
	require.Equal(t, "push", headerValue(raw, "X-GitHub-Event"))
	require.Empty(t, headerValue(raw, "empty"))
	require.Empty(t, headerValue(raw, "absent"))
}

func TestVerifyErrorsAreDistinct(t *testing.T) {
	t.Parallel()

	for i, a := range verifyErrors {
		for j, b := range verifyErrors {
			require.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}
