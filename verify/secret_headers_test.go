package verify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A header that carries the secret as it is lets whoever reads a stored
// request send as the provider: each provider declares every such header,
// so that ingest can drop it. Checked on every preset's vector and on what
// each provider's signer sends.
func TestSecretHeadersDeclared(t *testing.T) {
	t.Parallel()
	requireDeclared := func(t *testing.T, provider, secret string, h http.Header) {
		t.Helper()
		declared := map[string]bool{}
		for _, name := range SecretHeaders(provider) {
			declared[http.CanonicalHeaderKey(name)] = true
		}
		for name, values := range h {
			for _, v := range values {
				if strings.Contains(v, secret) {
					require.True(t, declared[http.CanonicalHeaderKey(name)],
						"%s sends its secret in %s, which SecretHeaders(%q) does not list", provider, name, provider)
				}
			}
		}
	}
	for _, pc := range presetCases() {
		h := pc.header
		if h == nil {
			h = pc.sign(pc.secret, pc.body, testNow.Unix())
		}
		requireDeclared(t, pc.provider, pc.secret, h)
	}
	const secret = "a-secret-of-28-bytes-or-more-0123"
	for _, provider := range Providers() {
		signer, err := NewConfigSigner(Config{Provider: provider, Secrets: []string{secret}, NotificationURL: "https://example.com/hook",
			HMAC: &HMACScheme{SignatureHeader: "X-Signature", ID: Field{Header: "X-Id"}, EventType: Field{Header: "X-Event"}}})
		if err != nil {
			continue // signs with a key hookinbox lacks (paypal, discord), or in the body (mailgun)
		}
		msg := Message{ID: "id-1", EventType: "t"}
		h, err := signer.Sign([]byte(`{"id":"evt_1","type":"t"}`), msg, testNow)
		if err != nil { // a sender of forms (twilio)
			h, err = signer.Sign([]byte("AccountSid=AC1&Body=hi"), msg, testNow)
		}
		require.NoError(t, err, provider)
		requireDeclared(t, provider, secret, h)
	}

	require.Equal(t, []string{"X-Gitlab-Token"}, SecretHeaders(ProviderGitLab))
	for _, p := range []string{ProviderGitHub, ProviderStripe, ProviderStandard, "shopify", "nonesuch"} {
		require.Empty(t, SecretHeaders(p), p)
	}
}
