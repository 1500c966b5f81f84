package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
)

// acmeScheme is the hmac block of docs/providers.md's "Any HMAC sender"
// example: a
// timestamped header scheme with the id in a header and the type in the
// body.
func acmeScheme() *HMACScheme {
	return &HMACScheme{
		SignatureHeader:    "X-Signature",
		SignaturePrefix:    "sha256=",
		SignatureSeparator: " ",
		SignedContent:      "{id}.{timestamp}.{body}",
		Algorithm:          "sha256",
		Encoding:           "hex",
		SecretEncoding:     "raw",
		ID:                 Field{Header: "X-Webhook-Id"},
		EventType:          Field{JSON: "type"},
		Timestamp:          &Field{Header: "X-Timestamp", Unit: "s", Signed: true},
		OccurredAt:         &Field{JSON: "created_at"},
	}
}

const (
	acmeSecret = "acme-signing-secret"
	acmeBody   = `{"type":"order.paid","created_at":"2024-03-01T11:59:00Z","data":{"id":"ord_1"}}`
)

// macOf is an HMAC computed here with crypto/hmac, independently of the
// verifier's template code.
func macOf(h func() hash.Hash, key string, parts ...string) []byte {
	m := hmac.New(h, []byte(key))
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func newHMACTest(t *testing.T, scheme *HMACScheme, secrets []string, now time.Time, url string) Verifier {
	t.Helper()
	v, err := New(Config{Provider: ProviderHMAC, HMAC: scheme, Secrets: secrets, NotificationURL: url, Now: func() time.Time { return now }})
	require.NoError(t, err)
	return v
}

func TestHMACVerify(t *testing.T) {
	t.Parallel()

	ts := fmt.Sprint(testNow.Unix())
	sig := func(secret, id, ts, body string) string {
		return "sha256=" + hex.EncodeToString(macOf(sha256.New, secret, id, ".", ts, ".", body))
	}
	headers := func(id, ts, signature string) http.Header {
		h := http.Header{}
		h.Set("X-Webhook-Id", id)
		h.Set("X-Timestamp", ts)
		h.Set("X-Signature", signature)
		return h
	}
	valid := Delivery{ID: "wh_1", EventType: "order.paid", OccurredAt: time.Date(2024, 3, 1, 11, 59, 0, 0, time.UTC)}

	for _, tc := range []struct {
		name    string
		secrets []string
		now     time.Time
		body    string
		header  http.Header
		want    Delivery
		wantErr error
		wantMsg string
	}{
		{name: "valid", header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), want: valid},
		{name: "rotation: second secret matches", secrets: []string{"old", acmeSecret}, header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), want: valid},
		{name: "rotation: two signatures in the header", header: headers("wh_1", ts, sig("old", "wh_1", ts, acmeBody)+" "+sig(acmeSecret, "wh_1", ts, acmeBody)), want: valid},
		{name: "rotation: header repeated", header: func() http.Header {
			h := headers("wh_1", ts, sig("old", "wh_1", ts, acmeBody))
			h.Add("X-Signature", sig(acmeSecret, "wh_1", ts, acmeBody))
			return h
		}(), want: valid},
		{name: "unprefixed and junk entries skipped", header: headers("wh_1", ts, "deadbeef sha1=00 sha256=zz "+sig(acmeSecret, "wh_1", ts, acmeBody)), want: valid},

		{name: "wrong secret", secrets: []string{"wrong"}, header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), wantErr: ErrInvalidSignature, wantMsg: "no configured secret matches any signature in X-Signature"},
		{name: "tampered body", body: strings.Replace(acmeBody, "ord_1", "ord_2", 1), header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), wantErr: ErrInvalidSignature},
		{name: "tampered id", header: headers("wh_2", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), wantErr: ErrInvalidSignature},
		{name: "tampered timestamp", header: headers("wh_1", fmt.Sprint(testNow.Unix()+1), sig(acmeSecret, "wh_1", ts, acmeBody)), wantErr: ErrInvalidSignature},
		{name: "stale", now: testNow.Add(6 * time.Minute), header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), wantErr: ErrTimestampOutOfTolerance, wantMsg: "X-Timestamp header is 6m0s in the past"},
		{name: "future", now: testNow.Add(-6 * time.Minute), header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, acmeBody)), wantErr: ErrTimestampOutOfTolerance, wantMsg: "in the future"},
		{name: "timestamp not canonical", header: headers("wh_1", "0"+ts, sig(acmeSecret, "wh_1", "0"+ts, acmeBody)), wantErr: ErrInvalidSignature, wantMsg: "X-Timestamp header must be unix seconds"},
		{name: "missing signature header", header: headers("wh_1", ts, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: X-Signature"},
		{name: "missing id header", header: headers("", ts, sig(acmeSecret, "", ts, acmeBody)), wantErr: ErrMissingHeader, wantMsg: "missing header: X-Webhook-Id"},
		{name: "missing timestamp header", header: headers("wh_1", "", sig(acmeSecret, "wh_1", "", acmeBody)), wantErr: ErrMissingHeader, wantMsg: "missing header: X-Timestamp"},
		{name: "no decodable signature", header: headers("wh_1", ts, "sha256=xyz"), wantErr: ErrInvalidSignature, wantMsg: `X-Signature has no hex signature of 32 bytes after "sha256="`},
		{name: "signed body without type", body: `{"data":{}}`, header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, `{"data":{}}`)), wantErr: ErrInvalidPayload, wantMsg: "no event type (body field type is missing or empty)"},
		{name: "signed body not JSON", body: `type=x`, header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, `type=x`)), wantErr: ErrInvalidPayload, wantMsg: "body is not a JSON object"},
		{name: "signed id with NUL", header: headers("wh_\x00", ts, sig(acmeSecret, "wh_\x00", ts, acmeBody)), wantErr: ErrInvalidPayload, wantMsg: "X-Webhook-Id header contains a control character"},
		{name: "type an object", body: `{"type":{}}`, header: headers("wh_1", ts, sig(acmeSecret, "wh_1", ts, `{"type":{}}`)), wantErr: ErrInvalidPayload, wantMsg: "body field type must be a string or a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			secrets := tc.secrets
			if secrets == nil {
				secrets = []string{acmeSecret}
			}
			now := tc.now
			if now.IsZero() {
				now = testNow
			}
			body := tc.body
			if body == "" {
				body = acmeBody
			}
			got, err := newHMACTest(t, acmeScheme(), secrets, now, "").Verify([]byte(body), tc.header)
			if tc.wantErr != nil {
				requireVerifyErr(t, err, tc.wantErr, append(secrets, strings.TrimPrefix(sig(acmeSecret, "wh_1", ts, body), "sha256="))...)
				require.ErrorContains(t, err, tc.wantMsg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestHMACStandardWebhooksAsData describes Standard Webhooks with the
// declarative scheme and checks it against the reference library's
// signature: the vector comes from standard-webhooks' own Go library.
func TestHMACStandardWebhooksAsData(t *testing.T) {
	t.Parallel()
	scheme := &HMACScheme{
		SignatureHeader: "webhook-signature", SignaturePrefix: "v1,", SignatureSeparator: " ",
		SignedContent: "{id}.{timestamp}.{body}", Encoding: "base64", SecretEncoding: "whsec",
		ID: Field{Header: "webhook-id"}, EventType: Field{JSON: "type"},
		Timestamp: &Field{Header: "webhook-timestamp", Signed: true},
	}
	wh, err := standardwebhooks.NewWebhook(standardTestSecret)
	require.NoError(t, err)
	refSig, err := wh.Sign(standardTestID, testNow, []byte(standardTestBody))
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", standardTestID)
	h.Set("webhook-timestamp", fmt.Sprint(testNow.Unix()))
	h.Set("webhook-signature", "v1a,ignored "+refSig)

	got, err := newHMACTest(t, scheme, []string{standardTestSecret}, testNow, "").Verify([]byte(standardTestBody), h)
	require.NoError(t, err)
	require.Equal(t, Delivery{ID: standardTestID, EventType: standardTestType}, got)

	// Our signer for the same scheme produces what the library verifies.
	signer, err := NewConfigSigner(Config{Provider: ProviderHMAC, HMAC: scheme, Secrets: []string{standardTestSecret}})
	require.NoError(t, err)
	signed, err := signer.Sign([]byte(standardTestBody), Message{ID: standardTestID}, time.Now())
	require.NoError(t, err)
	require.NoError(t, wh.Verify([]byte(standardTestBody), signed))
}

// TestHMACKeyValueParts is Paddle's shape, "ts=…;h1=…", with the timestamp
// read from a signature part and the id from the body.
func TestHMACKeyValueParts(t *testing.T) {
	t.Parallel()
	scheme := &HMACScheme{
		SignatureHeader: "Sig", SignatureSeparator: ";", SignaturePart: "h1", SignedContent: "{timestamp}:{body}",
		ID: Field{JSON: "event_id"}, EventType: Field{JSON: "event_type"},
		Timestamp: &Field{SignaturePart: "ts", Signed: true}, OccurredAt: &Field{JSON: "occurred_at"},
	}
	body := `{"event_id":"evt_1","event_type":"x.y","occurred_at":1709294400.5}`
	ts := fmt.Sprint(testNow.Unix())
	good := hex.EncodeToString(macOf(sha256.New, "k", ts, ":", body))
	verify := func(header string) (Delivery, error) {
		return newHMACTest(t, scheme, []string{"k"}, testNow, "").Verify([]byte(body), http.Header{"Sig": {header}})
	}
	got, err := verify("ts=" + ts + ";h1=00;h1=" + good)
	require.NoError(t, err)
	require.Equal(t, Delivery{ID: "evt_1", EventType: "x.y", OccurredAt: time.Unix(1709294400, 500_000_000).UTC()}, got)

	_, err = verify("h1=" + good)
	requireVerifyErr(t, err, ErrInvalidSignature)
	require.ErrorContains(t, err, "Sig has no ts=<timestamp> item")
	_, err = verify("ts=" + ts + ";ts=1;h1=" + good)
	require.ErrorContains(t, err, "more than one ts= item")
	_, err = verify("ts=" + ts + ";v1=" + good)
	require.ErrorContains(t, err, "in a h1=… item")

	signer, err := NewConfigSigner(Config{Provider: ProviderHMAC, HMAC: scheme, Secrets: []string{"k"}})
	require.NoError(t, err)
	h, err := signer.Sign([]byte(body), Message{}, testNow)
	require.NoError(t, err)
	require.Equal(t, "ts="+ts+";h1="+good, h.Get("Sig"))
}

// TestHMACBodyIDFormAndURL covers a sender with no id (body hash), a form
// body, a JSON timestamp in milliseconds, {url} and {method}, SHA-1 and
// base64url with a base64 secret.
func TestHMACBodyIDFormAndURL(t *testing.T) {
	t.Parallel()
	key := []byte("binary\x00key")
	scheme := &HMACScheme{
		SignatureHeader: "X-Sig", SignedContent: "{method} {url}\n{body}", Algorithm: "sha1", Encoding: "base64url", SecretEncoding: "base64",
		ID: Field{BodySHA256: true}, EventType: Field{JSON: "payload.type"},
		Timestamp: &Field{JSON: "ts", Unit: "ms", Signed: true},
	}
	body := `ts=` + fmt.Sprint(testNow.UnixMilli()) + `&payload=%7B%22type%22%3A%22block_actions%22%7D`
	url := "https://hooks.example.com/webhooks/acme"
	m := hmac.New(sha1.New, key)
	m.Write([]byte("POST " + url + "\n" + body))
	h := http.Header{"X-Sig": {base64.RawURLEncoding.EncodeToString(m.Sum(nil))}, "Content-Type": {"application/x-www-form-urlencoded"}}
	secret := base64.StdEncoding.EncodeToString(key)

	got, err := newHMACTest(t, scheme, []string{secret}, testNow, url).Verify([]byte(body), h)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(body))
	require.Equal(t, Delivery{ID: "sha256:" + hex.EncodeToString(sum[:]), EventType: "block_actions"}, got)

	// The same form without its content type is not read as a form.
	h.Del("Content-Type")
	_, err = newHMACTest(t, scheme, []string{secret}, testNow, url).Verify([]byte(body), h)
	requireVerifyErr(t, err, ErrInvalidPayload)
	h.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")

	_, err = newHMACTest(t, scheme, []string{secret}, testNow, "https://other.example.com/").Verify([]byte(body), h)
	requireVerifyErr(t, err, ErrInvalidSignature)
	_, err = newHMACTest(t, scheme, []string{secret}, testNow.Add(time.Hour), url).Verify([]byte(body), h)
	requireVerifyErr(t, err, ErrTimestampOutOfTolerance)
}

func TestHMACConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	base := func() *HMACScheme {
		return &HMACScheme{SignatureHeader: "X-Sig", ID: Field{Header: "X-Id"}, EventType: Field{JSON: "type"}}
	}
	for _, tc := range []struct {
		name   string
		edit   func(*HMACScheme)
		url    string
		secret string
		key    string
		msg    string
	}{
		{name: "no header", edit: func(s *HMACScheme) { s.SignatureHeader = "" }, key: "hmac.signature_header"},
		{name: "no body in template", edit: func(s *HMACScheme) { s.SignedContent = "{id}" }, key: "hmac.signed_content", msg: "{body} exactly once"},
		{name: "body twice", edit: func(s *HMACScheme) { s.SignedContent = "{body}{body}" }, key: "hmac.signed_content", msg: "{body} exactly once"},
		{name: "unclosed brace", edit: func(s *HMACScheme) { s.SignedContent = "{body" }, key: "hmac.signed_content", msg: "not closed"},
		{name: "stray closing brace", edit: func(s *HMACScheme) { s.SignedContent = "}{body}" }, key: "hmac.signed_content", msg: "closes nothing"},
		{name: "unknown placeholder", edit: func(s *HMACScheme) { s.SignedContent = "{nonce}{body}" }, key: "hmac.signed_content", msg: "unknown placeholder {nonce}"},
		{name: "id placeholder without id header", edit: func(s *HMACScheme) { s.SignedContent = "{id}{body}"; s.ID = Field{JSON: "id"} }, key: "hmac.signed_content", msg: "{id} needs"},
		{name: "timestamp placeholder without timestamp", edit: func(s *HMACScheme) { s.SignedContent = "{timestamp}{body}" }, key: "hmac.signed_content", msg: "{timestamp} needs"},
		{name: "url placeholder without notification_url", edit: func(s *HMACScheme) { s.SignedContent = "{url}{body}" }, key: "notification_url"},
		{name: "bad algorithm", edit: func(s *HMACScheme) { s.Algorithm = "md5" }, key: "hmac.algorithm"},
		{name: "bad encoding", edit: func(s *HMACScheme) { s.Encoding = "base32" }, key: "hmac.encoding"},
		{name: "bad secret encoding", edit: func(s *HMACScheme) { s.SecretEncoding = "pem" }, key: "hmac.secret_encoding"},
		{name: "part without separator", edit: func(s *HMACScheme) { s.SignaturePart = "h1" }, key: "hmac.signature_separator"},
		{name: "two id sources", edit: func(s *HMACScheme) { s.ID.JSON = "id" }, key: "hmac.id", msg: "set one of"},
		{name: "no event type", edit: func(s *HMACScheme) { s.EventType = Field{} }, key: "hmac.event_type", msg: "required"},
		{name: "event type from body hash", edit: func(s *HMACScheme) { s.EventType = Field{BodySHA256: true} }, key: "hmac.event_type"},
		{name: "id with a unit", edit: func(s *HMACScheme) { s.ID.Unit = "s" }, key: "hmac.id.unit"},
		{name: "bad path", edit: func(s *HMACScheme) { s.EventType = Field{JSON: "a..b"} }, key: "hmac.event_type.json"},
		{name: "timestamp part without parts", edit: func(s *HMACScheme) { s.Timestamp = &Field{SignaturePart: "ts"} }, key: "hmac.timestamp.signature_part"},
		{name: "occurred_at from a part", edit: func(s *HMACScheme) { s.OccurredAt = &Field{SignaturePart: "ts"} }, key: "hmac.occurred_at"},
		{name: "hex secret that is not hex", edit: func(s *HMACScheme) { s.SecretEncoding = "hex" }, secret: "zz-not-hex", key: "secrets", msg: "secret 1 of 1 is not a hex secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			tc.edit(s)
			secret := tc.secret
			if secret == "" {
				secret = "s"
			}
			_, err := New(Config{Provider: ProviderHMAC, HMAC: s, Secrets: []string{secret}, NotificationURL: tc.url})
			var cerr *ConfigError
			require.ErrorAs(t, err, &cerr)
			require.Equal(t, tc.key, cerr.Key)
			require.ErrorContains(t, err, tc.msg)
			require.NotContains(t, err.Error(), "zz-not-hex")
		})
	}
	_, err := New(Config{Provider: ProviderHMAC, Secrets: []string{"s"}})
	require.ErrorContains(t, err, "hmac: required for provider hmac")
	_, err = New(Config{Provider: ProviderGitHub, HMAC: base(), Secrets: []string{"s"}})
	require.ErrorContains(t, err, "hmac: only hmac sources take an hmac block")
}

func TestHMACSignerRoundTrip(t *testing.T) {
	t.Parallel()
	signer, err := NewConfigSigner(Config{Provider: ProviderHMAC, HMAC: acmeScheme(), Secrets: []string{acmeSecret}})
	require.NoError(t, err)
	h, err := signer.Sign([]byte(acmeBody), Message{ID: "wh_9"}, testNow)
	require.NoError(t, err)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	got, err := newHMACTest(t, acmeScheme(), []string{acmeSecret}, testNow, "").Verify([]byte(acmeBody), h)
	require.NoError(t, err)
	require.Equal(t, "wh_9", got.ID)

	_, err = signer.Sign([]byte(acmeBody), Message{}, testNow)
	require.ErrorContains(t, err, "Message.ID is required (sent as X-Webhook-Id)")
}
