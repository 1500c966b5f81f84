package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Twilio's documented example (https://www.twilio.com/docs/usage/webhooks/webhooks-security):
// auth token 12345, https://mycompany.com/myapp.php?foo=1&bar=2 and these
// parameters sign to 0/KCTR6DLpKmkAf8muzZqo1nDgQ=.
const (
	twilioDocToken = "12345"
	twilioDocURL   = "https://mycompany.com/myapp.php?foo=1&bar=2"
	// Written out of order on purpose: the signature sorts them.
	twilioDocForm = "To=%2B18005551212&CallSid=CA1234567890ABCDE&Digits=1234&From=%2B12349013030&Caller=%2B12349013030"
	twilioDocSig  = "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
	// twilio-go's test vector for JSON bodies (client/request_validator_test.go).
	twilioJSONBody = `{"property": "value", "boolean": true}`
	twilioBodyHash = "0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620"
	twilioJSONSig  = "a9nBmqA0ju/hNViExpshrM61xv4="
)

func twilioRequest(t *testing.T, notificationURL string, tokens []string, body, query string, h http.Header) (Delivery, error) {
	t.Helper()
	v, err := New(Config{Provider: ProviderTwilio, Secrets: tokens, NotificationURL: notificationURL, Now: func() time.Time { return testNow }})
	require.NoError(t, err)
	return v.(RequestVerifier).VerifyRequest(t.Context(), Request{Body: []byte(body), Header: h, RawQuery: query})
}

func TestTwilio(t *testing.T) {
	t.Parallel()
	form := func(sig string) http.Header {
		return hdr("X-Twilio-Signature", sig, "Content-Type", "application/x-www-form-urlencoded", "I-Twilio-Idempotency-Token", "idem-1")
	}
	jsonHeader := func(sig string) http.Header {
		return hdr("X-Twilio-Signature", sig, "Content-Type", "application/json")
	}
	jsonQuery := "foo=1&bar=2&bodySHA256=" + twilioBodyHash

	got, err := twilioRequest(t, twilioDocURL, []string{twilioDocToken}, twilioDocForm, "foo=1&bar=2", form(twilioDocSig))
	require.NoError(t, err, "Twilio's documented example")
	require.Equal(t, Delivery{ID: "idem-1", EventType: twilioDefaultType}, got)

	got, err = twilioRequest(t, "https://mycompany.com/myapp.php", []string{twilioDocToken}, twilioJSONBody, jsonQuery, jsonHeader(twilioJSONSig))
	require.NoError(t, err, "twilio-go's JSON vector")
	require.Equal(t, Delivery{ID: bodySHA(twilioJSONBody), EventType: twilioDefaultType}, got)

	// twilio-go: "https and port is specified but signature is generated without it".
	twilioGoForm := "Digits=1234&CallSid=CA1234567890ABCDE&To=%2B18005551212&Caller=%2B14158675309&From=%2B14158675309"
	_, err = twilioRequest(t, "https://mycompany.com:1234/myapp.php?foo=1&bar=2", []string{twilioDocToken}, twilioGoForm, "foo=1&bar=2", form("RSOYDt4T1cUTdK1PDd93/VVr8B8="))
	require.NoError(t, err, "twilio-go's port vector")

	_, err = twilioRequest(t, twilioDocURL, []string{"other", twilioDocToken}, twilioDocForm, "foo=1&bar=2", form(twilioDocSig))
	require.NoError(t, err, "rotation: the second token matches")

	for name, tc := range map[string]struct {
		url, body, query string
		tokens           []string
		h                http.Header
		want             error
	}{
		"wrong token":         {twilioDocURL, twilioDocForm, "foo=1&bar=2", []string{"54321"}, form(twilioDocSig), ErrInvalidSignature},
		"tampered parameter":  {twilioDocURL, strings.Replace(twilioDocForm, "1234&", "9999&", 1), "foo=1&bar=2", nil, form(twilioDocSig), ErrInvalidSignature},
		"another query":       {twilioDocURL, twilioDocForm, "foo=1&bar=3", nil, form(twilioDocSig), ErrInvalidSignature},
		"another URL":         {"https://evil.example.com/myapp.php", twilioDocForm, "foo=1&bar=2", nil, form(twilioDocSig), ErrInvalidSignature},
		"JSON body tampered":  {"https://mycompany.com/myapp.php", strings.Replace(twilioJSONBody, "value", "other", 1), jsonQuery, nil, jsonHeader(twilioJSONSig), ErrInvalidSignature},
		"JSON without hash":   {"https://mycompany.com/myapp.php", twilioJSONBody, "foo=1&bar=2", nil, jsonHeader(twilioJSONSig), ErrInvalidSignature},
		"missing signature":   {twilioDocURL, twilioDocForm, "foo=1&bar=2", nil, hdr("Content-Type", "application/x-www-form-urlencoded"), ErrMissingHeader},
		"signature not SHA-1": {twilioDocURL, twilioDocForm, "foo=1&bar=2", nil, form("c2hvcnQ="), ErrInvalidSignature},
	} {
		tokens := tc.tokens
		if tokens == nil {
			tokens = []string{twilioDocToken}
		}
		_, err := twilioRequest(t, tc.url, tokens, tc.body, tc.query, tc.h)
		requireVerifyErr(t, err, tc.want, twilioDocToken)
		require.Error(t, err, name)
	}

	// A status callback names its event; the signer signs as Twilio does.
	body := "MessageSid=SM1&MessageStatus=delivered&To=%2B15005550006"
	signer, err := NewConfigSigner(Config{Provider: ProviderTwilio, Secrets: []string{"tok"}, NotificationURL: "https://hooks.example.com/webhooks/twilio"})
	require.NoError(t, err)
	h, err := signer.Sign([]byte(body), Message{ID: "idem-2"}, time.Time{})
	require.NoError(t, err)
	got, err = twilioRequest(t, "https://hooks.example.com/webhooks/twilio", []string{"tok"}, body, "", h)
	require.NoError(t, err)
	require.Equal(t, Delivery{ID: "idem-2", EventType: "delivered"}, got)
	_, err = signer.Sign([]byte(twilioJSONBody), Message{}, time.Time{})
	require.ErrorContains(t, err, "only form bodies")

	_, err = New(Config{Provider: ProviderTwilio, Secrets: []string{"tok"}})
	require.ErrorContains(t, err, "notification_url: required for twilio")
}

// Mailgun's documented formula (https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks):
// hex HMAC-SHA256 of signature.timestamp + signature.token under the
// webhook signing key. Mailgun publishes no key with its example, so the
// signature is computed here with crypto/hmac.
func mailgunBody(key string, ts int64, token, event string) string {
	mac := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(mac, "%d%s", ts, token)
	return fmt.Sprintf(`{"signature":{"timestamp":"%d","token":"%s","signature":"%s"},"event-data":{"event":"%s","timestamp":1709294340.329574,"id":"DACSsAdVSeGpLid7TN03WA","message":{"headers":{"message-id":"20240301115900.1.ABC@example.com"}}}}`,
		ts, token, hex.EncodeToString(mac.Sum(nil)), event)
}

func TestMailgun(t *testing.T) {
	t.Parallel()
	const key = "key-mailgun-signing"
	token := "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"
	body := mailgunBody(key, testNow.Unix(), token, "opened")
	verify := func(keys []string, now time.Time, body string) (Delivery, error) {
		return newTestVerifier(t, ProviderMailgun, keys, now).Verify([]byte(body), http.Header{})
	}

	got, err := verify([]string{key}, testNow, body)
	require.NoError(t, err)
	require.Equal(t, Delivery{ID: token, EventType: "opened", OccurredAt: time.Unix(1709294340, 329574000).UTC()}, got)
	_, err = verify([]string{"old-key", key}, testNow, body)
	require.NoError(t, err, "rotation")

	_, err = verify([]string{"other-key"}, testNow, body)
	requireVerifyErr(t, err, ErrInvalidSignature, key)
	_, err = verify([]string{key}, testNow, strings.Replace(body, token, "b"+token[1:], 1))
	requireVerifyErr(t, err, ErrInvalidSignature, key)
	_, err = verify([]string{key}, testNow, strings.Replace(body, fmt.Sprint(testNow.Unix()), fmt.Sprint(testNow.Unix()+1), 1))
	requireVerifyErr(t, err, ErrInvalidSignature, key)
	for _, skew := range []time.Duration{-10 * time.Minute, 10 * time.Minute} {
		_, err = verify([]string{key}, testNow.Add(skew), body)
		requireVerifyErr(t, err, ErrTimestampOutOfTolerance)
	}
	_, err = verify([]string{key}, testNow, `{"event-data":{"event":"opened"}}`)
	requireVerifyErr(t, err, ErrInvalidSignature)
	require.ErrorContains(t, err, "no signature.timestamp")
	_, err = verify([]string{key}, testNow, "timestamp=1&token=x")
	requireVerifyErr(t, err, ErrInvalidPayload)

	// The signature does not cover event-data: the same token with another
	// event verifies, and keeps its delivery id, so the inbox answers it as
	// a conflict rather than storing a second delivery (ingest tests it).
	other := strings.Replace(body, `"event":"opened"`, `"event":"clicked"`, 1)
	got, err = verify([]string{key}, testNow, other)
	require.NoError(t, err)
	require.Equal(t, token, got.ID)
}
