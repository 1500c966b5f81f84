package verify

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v85/webhook"
)

const (
	stripeTestSecret = "whsec_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	stripeTestID     = "evt_1OabcDEFghiJKLmn"
	stripeTestType   = "invoice.paid"
	stripeCreated    = 1709294340 // a minute before testNow
	stripeTestBody   = `{"id":"evt_1OabcDEFghiJKLmn","object":"event","type":"invoice.paid","created":1709294340,"livemode":false,"data":{"object":{"id":"in_1"}}}`
)

// stripeHeader signs body with stripe-go's own test helper, so cases that
// change the body or timestamp are checked against the reference signer.
func stripeHeader(secret, body string, ts time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: []byte(body), Secret: secret, Timestamp: ts,
	}).Header
}

// resignStripe swaps the body and signs it properly at testNow.
func resignStripe(body string) func([]byte, http.Header) []byte {
	return func(_ []byte, h http.Header) []byte {
		h.Set(stripeSignatureHeader, stripeHeader(stripeTestSecret, body, testNow))
		return []byte(body)
	}
}

// stripeEvent returns a test event body with one field replaced by raw
// JSON, or removed when raw is empty.
func stripeEvent(field, raw string) string {
	fields := map[string]string{
		"id": `"` + stripeTestID + `"`, "object": `"event"`, "type": `"` + stripeTestType + `"`,
		"created": fmt.Sprint(stripeCreated), "data": `{"object":{}}`,
	}
	fields[field] = raw
	var parts []string
	for _, k := range []string{"id", "object", "type", "created", "data"} {
		if fields[k] != "" {
			parts = append(parts, fmt.Sprintf("%q:%s", k, fields[k]))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestStripeVerify(t *testing.T) {
	t.Parallel()

	signer, err := NewSigner(ProviderStripe, stripeTestSecret)
	require.NoError(t, err)
	valid := Delivery{ID: stripeTestID, EventType: stripeTestType, OccurredAt: time.Unix(stripeCreated, 0).UTC()}
	ts := fmt.Sprint(testNow.Unix())
	good := hex.EncodeToString(stripeMAC([]byte(stripeTestSecret), testNow.Unix(), []byte(stripeTestBody)))
	other := hex.EncodeToString(stripeMAC([]byte("whsec_other"), testNow.Unix(), []byte(stripeTestBody)))
	sigHeader := func(v string) func([]byte, http.Header) []byte { return withHeader(stripeSignatureHeader, v) }

	runVerifyCases(t, ProviderStripe, stripeTestSecret, signer, []byte(stripeTestBody), Message{}, []verifyCase{
		{name: "valid", want: valid},
		{name: "rotation second secret matches", secrets: []string{"whsec_old", stripeTestSecret}, want: valid},
		{name: "rolled endpoint sends two v1", edit: sigHeader("t=" + ts + ",v1=" + other + ",v1=" + good), want: valid},
		{name: "v0 and unknown items ignored", edit: sigHeader("t=" + ts + ",v0=" + other + ",foo=bar,junk,=,v1=zz,v1=" + good), want: valid},
		{name: "v1 before t", edit: sigHeader("v1=" + good + ",t=" + ts), want: valid},
		{name: "spaces around items", edit: sigHeader("t=" + ts + ", v1=" + good), want: valid},
		{name: "same t twice", edit: sigHeader("t=" + ts + ",t=" + ts + ",v1=" + good), want: valid},
		{name: "created absent", edit: resignStripe(stripeEvent("created", "")), want: Delivery{ID: stripeTestID, EventType: stripeTestType}},
		{name: "created not a number", edit: resignStripe(stripeEvent("created", `"yesterday"`)), want: Delivery{ID: stripeTestID, EventType: stripeTestType}},
		{name: "within custom tolerance", tolerance: time.Hour, now: testNow.Add(59 * time.Minute), want: valid},

		{name: "wrong secret", secrets: []string{"whsec_wrong"}, wantErr: ErrInvalidSignature, wantMsg: "no configured secret matches any v1 signature in Stripe-Signature"},
		{name: "secret without its whsec_ prefix", secrets: []string{strings.TrimPrefix(stripeTestSecret, "whsec_")}, wantErr: ErrInvalidSignature},
		{name: "different body", edit: withBody(stripeEvent("type", `"invoice.voided"`)), wantErr: ErrInvalidSignature},
		{name: "t changed without re-signing", edit: sigHeader(fmt.Sprintf("t=%d,v1=%s", testNow.Unix()+1, good)), wantErr: ErrInvalidSignature},
		{name: "signature only over the body", edit: sigHeader("t=" + ts + ",v1=" + hex.EncodeToString(signHMAC([]byte(stripeTestSecret), []byte(stripeTestBody)))), wantErr: ErrInvalidSignature},

		{name: "missing header", edit: sigHeader(""), wantErr: ErrMissingHeader, wantMsg: "missing header: Stripe-Signature"},
		{name: "no t", edit: sigHeader("v1=" + good), wantErr: ErrInvalidSignature, wantMsg: "no t=<unix seconds> timestamp"},
		{name: "t not a number", edit: sigHeader("t=now,v1=" + good), wantErr: ErrInvalidSignature, wantMsg: "no t="},
		{name: "t with sign", edit: sigHeader("t=+" + ts + ",v1=" + good), wantErr: ErrInvalidSignature, wantMsg: "no t="},
		{name: "conflicting t", edit: sigHeader("t=" + ts + ",t=1,v1=" + good), wantErr: ErrInvalidSignature, wantMsg: "more than one t="},
		{name: "no v1", edit: sigHeader("t=" + ts), wantErr: ErrInvalidSignature, wantMsg: "no v1="},
		{name: "only v0", edit: sigHeader("t=" + ts + ",v0=" + good), wantErr: ErrInvalidSignature, wantMsg: "no v1="},
		{name: "v1 not hex", edit: sigHeader("t=" + ts + ",v1=" + strings.Repeat("g", 64)), wantErr: ErrInvalidSignature, wantMsg: "no v1="},
		{name: "v1 truncated", edit: sigHeader("t=" + ts + ",v1=" + good[:60]), wantErr: ErrInvalidSignature, wantMsg: "no v1="},
		{name: "garbage", edit: sigHeader("garbage"), wantErr: ErrInvalidSignature},

		{name: "too old", now: testNow.Add(6 * time.Minute), wantErr: ErrTimestampOutOfTolerance, wantMsg: "6m0s in the past (tolerance 5m0s)"},
		{name: "too new", now: testNow.Add(-6 * time.Minute), wantErr: ErrTimestampOutOfTolerance, wantMsg: "6m0s in the future (tolerance 5m0s)"},
		{name: "outside custom tolerance", tolerance: 10 * time.Second, now: testNow.Add(11 * time.Second), wantErr: ErrTimestampOutOfTolerance, wantMsg: "tolerance 10s"},
		{name: "bad signature beats tolerance", secrets: []string{"whsec_wrong"}, now: testNow.Add(time.Hour), wantErr: ErrInvalidSignature},
		{name: "tolerance beats payload", edit: resignStripe("not json"), now: testNow.Add(time.Hour), wantErr: ErrTimestampOutOfTolerance},

		{name: "not JSON", edit: resignStripe("not json"), wantErr: ErrInvalidPayload, wantMsg: "body is not a JSON object"},
		{name: "truncated JSON", edit: resignStripe(`{"id":"evt_1",`), wantErr: ErrInvalidPayload, wantMsg: "body is not valid JSON"},
		{name: "JSON array", edit: resignStripe(`[` + stripeTestBody + `]`), wantErr: ErrInvalidPayload, wantMsg: "not a JSON object"},
		{name: "id missing", edit: resignStripe(stripeEvent("id", "")), wantErr: ErrInvalidPayload, wantMsg: "body field id is missing"},
		{name: "id null", edit: resignStripe(stripeEvent("id", "null")), wantErr: ErrInvalidPayload, wantMsg: "body field id is missing"},
		{name: "id empty", edit: resignStripe(stripeEvent("id", `""`)), wantErr: ErrInvalidPayload, wantMsg: "body field id is empty"},
		{name: "id a number", edit: resignStripe(stripeEvent("id", "42")), wantErr: ErrInvalidPayload, wantMsg: "body field id must be a string"},
		{name: "id too long", edit: resignStripe(stripeEvent("id", `"`+strings.Repeat("e", 256)+`"`)), wantErr: ErrInvalidPayload, wantMsg: "body field id is 256 bytes long (max 255)"},
		{name: "id with NUL", edit: resignStripe(stripeEvent("id", `"evt_\u0000"`)), wantErr: ErrInvalidPayload, wantMsg: "body field id contains a control character"},
		{name: "type missing", edit: resignStripe(stripeEvent("type", "")), wantErr: ErrInvalidPayload, wantMsg: "body field type is missing"},
		{name: "type an object", edit: resignStripe(stripeEvent("type", `{"x":1}`)), wantErr: ErrInvalidPayload, wantMsg: "body field type must be a string"},
		{name: "type with newline", edit: resignStripe(stripeEvent("type", `"invoice.paid\n"`)), wantErr: ErrInvalidPayload, wantMsg: "body field type contains a control character"},
	})
}

// TestStripeReferenceVectors checks our verifier against stripe-go's signer
// and stripe-go's verifier against our Signer.
func TestStripeReferenceVectors(t *testing.T) {
	t.Parallel()

	body := []byte(stripeTestBody)
	v := newTestVerifier(t, ProviderStripe, []string{stripeTestSecret}, testNow)
	want := Delivery{ID: stripeTestID, EventType: stripeTestType, OccurredAt: time.Unix(stripeCreated, 0).UTC()}

	t.Run("stripe-go signs, we verify", func(t *testing.T) {
		t.Parallel()

		header := http.Header{}
		header.Set(stripeSignatureHeader, stripeHeader(stripeTestSecret, stripeTestBody, testNow))
		got, err := v.Verify(body, header)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("stripe-go v0 scheme is refused", func(t *testing.T) {
		t.Parallel()

		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
			Payload: body, Secret: stripeTestSecret, Timestamp: testNow, Scheme: "v0",
		})
		_, err := v.Verify(body, http.Header{"Stripe-Signature": {signed.Header}})
		requireVerifyErr(t, err, ErrInvalidSignature)
	})

	t.Run("we sign, stripe-go verifies", func(t *testing.T) {
		t.Parallel()

		signer, err := NewSigner(ProviderStripe, stripeTestSecret)
		require.NoError(t, err)

		header, err := signer.Sign(body, Message{ID: "ignored", EventType: "ignored"}, testNow)
		require.NoError(t, err)
		require.Equal(t, stripeHeader(stripeTestSecret, stripeTestBody, testNow), header.Get(stripeSignatureHeader))
		require.Equal(t, "application/json; charset=utf-8", header.Get("Content-Type"))
		require.NoError(t, webhook.ValidatePayloadIgnoringTolerance(body, header.Get(stripeSignatureHeader), stripeTestSecret))
		require.Error(t, webhook.ValidatePayloadIgnoringTolerance(body, header.Get(stripeSignatureHeader), "whsec_wrong"))

		// stripe-go checks tolerance against the real clock.
		header, err = signer.Sign(body, Message{}, time.Now())
		require.NoError(t, err)
		require.NoError(t, webhook.ValidatePayload(body, header.Get(stripeSignatureHeader), stripeTestSecret))
	})

	t.Run("future timestamp stripe-go accepts is refused", func(t *testing.T) {
		t.Parallel()

		now := time.Now()
		sig := stripeHeader(stripeTestSecret, stripeTestBody, now.Add(time.Hour))
		require.NoError(t, webhook.ValidatePayload(body, sig, stripeTestSecret))

		real := newTestVerifier(t, ProviderStripe, []string{stripeTestSecret}, now)
		_, err := real.Verify(body, http.Header{"Stripe-Signature": {sig}})
		requireVerifyErr(t, err, ErrTimestampOutOfTolerance)
		require.ErrorContains(t, err, "1h0m0s in the future")
	})
}

func TestParseStripeSignature(t *testing.T) {
	t.Parallel()

	a, b := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	tests := []struct {
		name     string
		header   string
		wantTS   int64
		wantSigs []string // hex; nil with wantMsg for an error
		wantMsg  string
	}{
		{name: "one", header: "t=1700000000,v1=" + a, wantTS: 1700000000, wantSigs: []string{a}},
		{name: "two", header: "t=1700000000,v1=" + a + ",v1=" + b, wantTS: 1700000000, wantSigs: []string{a, b}},
		{name: "skips junk", header: "x,t=1,v0=" + b + ",v1=nothex,v1=" + a + ",v2=" + b + ",v1=", wantTS: 1, wantSigs: []string{a}},
		{name: "uppercase hex", header: "t=1,v1=" + strings.ToUpper(a), wantTS: 1, wantSigs: []string{a}},
		{name: "value with =", header: "t=1,v1=" + a + "=", wantMsg: "no v1="},
		{name: "empty", header: "", wantMsg: "no t="},
		{name: "no t", header: "v1=" + a, wantMsg: "no t="},
		{name: "negative t", header: "t=-1,v1=" + a, wantMsg: "no t="},
		{name: "leading zero t", header: "t=01,v1=" + a, wantMsg: "no t="},
		{name: "overflowing t", header: "t=99999999999999999999,v1=" + a, wantMsg: "no t="},
		{name: "T uppercase", header: "T=1,v1=" + a, wantMsg: "no t="},
		{name: "conflicting t", header: "t=1,t=2,v1=" + a, wantMsg: "more than one t="},
		{name: "no v1", header: "t=1,v0=" + a, wantMsg: "no v1="},
		{name: "short v1", header: "t=1,v1=abcd", wantMsg: "no v1="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			ts, sigs, err := parseStripeSignature(tt.header)
			if tt.wantMsg != "" {
				requireVerifyErr(t, err, ErrInvalidSignature)
				require.ErrorContains(t, err, tt.wantMsg)
				require.Nil(t, sigs)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantTS, ts)
			var got []string
			for _, s := range sigs {
				got = append(got, hex.EncodeToString(s))
			}
			require.Equal(t, tt.wantSigs, got)
		})
	}
}

// Invalid UTF-8 inside the body's id would reach us as U+FFFD after JSON
// decoding: an id the provider never sent. It is refused (found by the
// hostile-input drill).
func TestStripeRejectsInvalidUTF8InBodyID(t *testing.T) {
	t.Parallel()
	now := time.Now()
	v, err := New(Config{Provider: ProviderStripe, Secrets: []string{"whsec_x"}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	s, err := NewSigner(ProviderStripe, "whsec_x")
	require.NoError(t, err)
	for _, body := range [][]byte{
		[]byte("{\"id\":\"evt_\xff\",\"type\":\"x\"}"),
		[]byte(`{"id":"evt_\ud800","type":"x"}`),
		[]byte("{\"id\":\"evt_1\",\"type\":\"x\xfe\"}"),
	} {
		h, err := s.Sign(body, Message{}, now)
		require.NoError(t, err)
		_, err = v.Verify(body, h)
		require.ErrorIs(t, err, ErrInvalidPayload, "%q", body)
	}
}
