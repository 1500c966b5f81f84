package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

const (
	gitHubTestSecret = "gh-test-secret-3Jq9"
	gitHubTestBody   = `{"action":"opened","number":1,"repository":{"full_name":"octo/hello"}}`
	gitHubTestID     = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	gitHubTestEvent  = "pull_request"
)

// gitHubMAC is an independent HMAC of body, hex encoded with the scheme
// prefix, so tests do not check our signing code against itself.
func gitHubMAC(prefix string, h func() hash.Hash, secret, body string) string {
	mac := hmac.New(h, []byte(secret))
	mac.Write([]byte(body))
	return prefix + hex.EncodeToString(mac.Sum(nil))
}

// resignGitHub swaps the body and signs it properly, to reach the checks
// that come after the signature.
func resignGitHub(body string) func([]byte, http.Header) []byte {
	return func(_ []byte, h http.Header) []byte {
		h.Set(gitHubSignatureHeader, gitHubMAC("sha256=", sha256.New, gitHubTestSecret, body))
		return []byte(body)
	}
}

func TestGitHubVerify(t *testing.T) {
	t.Parallel()

	signer, err := NewSigner(ProviderGitHub, gitHubTestSecret)
	require.NoError(t, err)
	valid := Delivery{ID: gitHubTestID, EventType: gitHubTestEvent}
	sha1Sig := gitHubMAC("sha1=", sha1.New, gitHubTestSecret, gitHubTestBody)
	sha512Sig := gitHubMAC("sha512=", sha512.New, gitHubTestSecret, gitHubTestBody)
	goodHex := strings.TrimPrefix(gitHubMAC("sha256=", sha256.New, gitHubTestSecret, gitHubTestBody), "sha256=")

	// go-github would take these; the cases below show that we do not.
	require.NoError(t, github.ValidateSignature(sha1Sig, []byte(gitHubTestBody), []byte(gitHubTestSecret)))
	require.NoError(t, github.ValidateSignature(sha512Sig, []byte(gitHubTestBody), []byte(gitHubTestSecret)))

	runVerifyCases(t, ProviderGitHub, gitHubTestSecret, signer, []byte(gitHubTestBody),
		Message{ID: gitHubTestID, EventType: gitHubTestEvent}, []verifyCase{
			{name: "valid", want: valid},
			{name: "rotation second secret matches", secrets: []string{"gh-old-secret", "", gitHubTestSecret}, want: valid},
			{name: "uppercase hex", edit: withHeader(gitHubSignatureHeader, "sha256="+strings.ToUpper(goodHex)), want: valid},
			{name: "JSON with surrounding whitespace", edit: resignGitHub(" \n" + gitHubTestBody + "\n"), want: valid},
			{name: "form content type but JSON body", edit: withHeader("Content-Type", "application/x-www-form-urlencoded"), want: valid},
			{
				name: "uncanonical header keys",
				edit: func(body []byte, h http.Header) []byte {
					for k, vs := range h {
						delete(h, k)
						h[strings.ToLower(k)] = vs
					}
					return body
				},
				want: valid,
			},

			{name: "wrong secret", secrets: []string{"gh-wrong-secret"}, wantErr: ErrInvalidSignature, wantMsg: "no configured secret matches X-Hub-Signature-256"},
			{name: "different body", edit: withBody(`{"action":"closed","number":1}`), wantErr: ErrInvalidSignature},
			{name: "body with trailing newline", edit: withBody(gitHubTestBody + "\n"), wantErr: ErrInvalidSignature},
			{name: "empty body", edit: withBody(""), wantErr: ErrInvalidSignature},

			{name: "missing delivery", edit: withHeader(gitHubDeliveryHeader, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: X-GitHub-Delivery"},
			{name: "missing event", edit: withHeader(gitHubEventHeader, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: X-GitHub-Event"},
			{name: "missing signature", edit: withHeader(gitHubSignatureHeader, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: X-Hub-Signature-256"},
			{
				name: "empty delivery value",
				edit: func(body []byte, h http.Header) []byte {
					h[http.CanonicalHeaderKey(gitHubDeliveryHeader)] = []string{""}
					return body
				},
				wantErr: ErrMissingHeader, wantMsg: "X-GitHub-Delivery",
			},
			{
				name: "only SHA-1 X-Hub-Signature",
				edit: func(body []byte, h http.Header) []byte {
					h.Del(gitHubSignatureHeader)
					h.Set(gitHubSHA1Header, sha1Sig)
					return body
				},
				wantErr: ErrMissingHeader, wantMsg: "missing header: X-Hub-Signature-256 (the SHA-1 X-Hub-Signature header is not accepted)",
			},

			{name: "sha1 in the 256 header", edit: withHeader(gitHubSignatureHeader, sha1Sig), wantErr: ErrInvalidSignature, wantMsg: "must be sha256="},
			{name: "sha512 in the 256 header", edit: withHeader(gitHubSignatureHeader, sha512Sig), wantErr: ErrInvalidSignature, wantMsg: "must be sha256="},
			{name: "no prefix", edit: withHeader(gitHubSignatureHeader, goodHex), wantErr: ErrInvalidSignature, wantMsg: "must be sha256="},
			{name: "uppercase prefix", edit: withHeader(gitHubSignatureHeader, "SHA256="+goodHex), wantErr: ErrInvalidSignature},
			{name: "not hex", edit: withHeader(gitHubSignatureHeader, "sha256="+strings.Repeat("zz", 32)), wantErr: ErrInvalidSignature, wantMsg: "64 hex digits"},
			{name: "short", edit: withHeader(gitHubSignatureHeader, "sha256="+goodHex[:62]), wantErr: ErrInvalidSignature, wantMsg: "64 hex digits"},
			{name: "long", edit: withHeader(gitHubSignatureHeader, "sha256="+goodHex+"00"), wantErr: ErrInvalidSignature, wantMsg: "64 hex digits"},
			{name: "prefix only", edit: withHeader(gitHubSignatureHeader, "sha256="), wantErr: ErrInvalidSignature},

			{name: "form-encoded body", edit: resignGitHub("payload=%7B%22zen%22%3A%22hi%22%7D"), wantErr: ErrInvalidPayload, wantMsg: "set the webhook's content type to application/json"},
			{
				name: "form content type with non-JSON body",
				edit: func(_ []byte, h http.Header) []byte {
					h.Set("Content-Type", "application/x-www-form-urlencoded")
					return resignGitHub("zen=hi")(nil, h)
				},
				wantErr: ErrInvalidPayload, wantMsg: "application/json",
			},
			{name: "not JSON", edit: resignGitHub("Hello, World!"), wantErr: ErrInvalidPayload, wantMsg: "body is not a JSON object"},
			{name: "JSON array", edit: resignGitHub(`[{"action":"opened"}]`), wantErr: ErrInvalidPayload, wantMsg: "not a JSON object"},
			{name: "JSON string", edit: resignGitHub(`"opened"`), wantErr: ErrInvalidPayload, wantMsg: "not a JSON object"},
			{name: "truncated JSON", edit: resignGitHub(`{"action":`), wantErr: ErrInvalidPayload, wantMsg: "body is not valid JSON"},
			{name: "trailing garbage", edit: resignGitHub(`{"action":"opened"}x`), wantErr: ErrInvalidPayload, wantMsg: "not valid JSON"},

			{name: "delivery too long", edit: withHeader(gitHubDeliveryHeader, strings.Repeat("a", MaxIDLength+1)), wantErr: ErrInvalidPayload, wantMsg: "X-GitHub-Delivery header is 256 bytes long"},
			{name: "delivery at max length", edit: withHeader(gitHubDeliveryHeader, strings.Repeat("a", MaxIDLength)), want: Delivery{ID: strings.Repeat("a", MaxIDLength), EventType: gitHubTestEvent}},
			{name: "delivery with NUL", edit: withHeader(gitHubDeliveryHeader, "72d3\x00"), wantErr: ErrInvalidPayload, wantMsg: "X-GitHub-Delivery header contains a control character"},
			{name: "delivery invalid UTF-8", edit: withHeader(gitHubDeliveryHeader, "72d3\xff"), wantErr: ErrInvalidPayload, wantMsg: "not valid UTF-8"},
			{name: "event too long", edit: withHeader(gitHubEventHeader, strings.Repeat("e", 300)), wantErr: ErrInvalidPayload, wantMsg: "X-GitHub-Event header is 300 bytes long"},
			{name: "event with newline", edit: withHeader(gitHubEventHeader, "push\r\nX-Evil: 1"), wantErr: ErrInvalidPayload, wantMsg: "X-GitHub-Event header contains a control character"},
		})
}

// TestGitHubDocumentedVector uses the example from GitHub's "Validating
// webhook deliveries" guide. Its payload is not JSON, so it verifies the
// signature and then fails the payload check, which comes after.
func TestGitHubDocumentedVector(t *testing.T) {
	t.Parallel()

	const (
		secret  = "It's a Secret to Everybody"
		payload = "Hello, World!"
		want    = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	)

	mac, err := parseGitHubSignature(want)
	require.NoError(t, err)
	require.Equal(t, strings.TrimPrefix(want, "sha256="), hex.EncodeToString(mac))
	require.NoError(t, github.ValidateSignature(want, []byte(payload), []byte(secret)))

	signer, err := NewSigner(ProviderGitHub, secret)
	require.NoError(t, err)
	header, err := signer.Sign([]byte(payload), Message{ID: gitHubTestID, EventType: "ping"}, time.Time{})
	require.NoError(t, err)
	require.Equal(t, want, header.Get(gitHubSignatureHeader))

	v := newTestVerifier(t, ProviderGitHub, []string{secret}, testNow)
	_, err = v.Verify([]byte(payload), header)
	requireVerifyErr(t, err, ErrInvalidPayload)
	require.ErrorContains(t, err, "not a JSON object")

	wrong := newTestVerifier(t, ProviderGitHub, []string{"It's a Secret to Nobody"}, testNow)
	_, err = wrong.Verify([]byte(payload), header)
	requireVerifyErr(t, err, ErrInvalidSignature, secret, want)

	// The same secret over a JSON body, signed by plain crypto/hmac the way
	// GitHub and go-github compute it.
	const body = `{"zen":"Keep it logically awesome.","hook_id":1}`
	header.Set(gitHubSignatureHeader, gitHubMAC("sha256=", sha256.New, secret, body))
	require.NoError(t, github.ValidateSignature(header.Get(gitHubSignatureHeader), []byte(body), []byte(secret)))
	got, err := v.Verify([]byte(body), header)
	require.NoError(t, err)
	require.Equal(t, Delivery{ID: gitHubTestID, EventType: "ping"}, got)
}

func TestGitHubSign(t *testing.T) {
	t.Parallel()

	signer, err := NewSigner(ProviderGitHub, gitHubTestSecret)
	require.NoError(t, err)

	header, err := signer.Sign([]byte(gitHubTestBody), Message{ID: gitHubTestID, EventType: gitHubTestEvent}, testNow)
	require.NoError(t, err)
	require.Equal(t, http.Header{
		"X-Github-Delivery":   {gitHubTestID},
		"X-Github-Event":      {gitHubTestEvent},
		"X-Hub-Signature-256": {gitHubMAC("sha256=", sha256.New, gitHubTestSecret, gitHubTestBody)},
		"Content-Type":        {"application/json"},
		"User-Agent":          {"GitHub-Hookshot/hookinbox"},
	}, header)
	require.Equal(t, gitHubTestID, github.DeliveryID(&http.Request{Header: header}))
	require.Equal(t, gitHubTestEvent, github.WebHookType(&http.Request{Header: header}))

	_, err = signer.Sign([]byte(gitHubTestBody), Message{EventType: gitHubTestEvent}, testNow)
	require.ErrorContains(t, err, "Message.ID is required")
	_, err = signer.Sign([]byte(gitHubTestBody), Message{ID: gitHubTestID}, testNow)
	require.ErrorContains(t, err, "Message.EventType is required")
}

func TestParseGitHubSignature(t *testing.T) {
	t.Parallel()

	good := strings.Repeat("ab", sha256.Size)
	tests := []struct {
		name   string
		header string
		want   []byte // nil when invalid
	}{
		{name: "valid", header: "sha256=" + good, want: mustHex(t, good)},
		{name: "uppercase hex", header: "sha256=" + strings.ToUpper(good), want: mustHex(t, good)},
		{name: "empty", header: ""},
		{name: "sha1", header: "sha1=" + strings.Repeat("ab", 20)},
		{name: "sha512", header: "sha512=" + strings.Repeat("ab", 64)},
		{name: "bare hex", header: good},
		{name: "space after prefix", header: "sha256= " + good},
		{name: "odd length", header: "sha256=" + good[1:]},
		{name: "too short", header: "sha256=" + good[:62]},
		{name: "trailing space", header: "sha256=" + good + " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got, err := parseGitHubSignature(tt.header)
			if tt.want == nil {
				requireVerifyErr(t, err, ErrInvalidSignature)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}
