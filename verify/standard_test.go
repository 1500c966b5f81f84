package verify

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
)

const (
	standardTestSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	standardTestID     = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
	standardTestType   = "contact.created"
	standardTestBody   = `{"type":"contact.created","timestamp":"2024-03-01T11:59:30.123+01:00","data":{"id":"c_1"}}`
)

// standardSign signs with the reference library, so cases that change the
// id, timestamp or body are checked against it rather than against us.
func standardSign(t *testing.T, secret, id string, ts time.Time, body string) string {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	sig, err := wh.Sign(id, ts, []byte(body))
	require.NoError(t, err)
	return sig
}

// resignStandard returns an edit that swaps id and body and signs them
// properly at testNow.
func resignStandard(t *testing.T, id, body string) func([]byte, http.Header) []byte {
	sig := standardSign(t, standardTestSecret, id, testNow, body)
	return func(_ []byte, h http.Header) []byte {
		h.Set(standardIDHeader, id)
		h.Set(standardSignatureHeader, sig)
		return []byte(body)
	}
}

// standardEvent returns a test body with its type as raw JSON, or without
// one when raw is empty, and the given extra members.
func standardEvent(typeRaw, extra string) string {
	var parts []string
	if typeRaw != "" {
		parts = append(parts, `"type":`+typeRaw)
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	parts = append(parts, `"data":{}`)
	return "{" + strings.Join(parts, ",") + "}"
}

func TestStandardVerify(t *testing.T) {
	t.Parallel()

	signer, err := NewSigner(ProviderStandard, standardTestSecret)
	require.NoError(t, err)
	occurred := time.Date(2024, 3, 1, 10, 59, 30, 123_000_000, time.UTC)
	valid := Delivery{ID: standardTestID, EventType: standardTestType, OccurredAt: occurred}
	good := standardSign(t, standardTestSecret, standardTestID, testNow, standardTestBody)
	other := standardSign(t, "whsec_b3RoZXIgc2VjcmV0", standardTestID, testNow, standardTestBody)
	goodB64 := strings.TrimPrefix(good, "v1,")
	sigHeader := func(v string) func([]byte, http.Header) []byte { return withHeader(standardSignatureHeader, v) }
	typeOnly := func(typ string) Delivery { return Delivery{ID: standardTestID, EventType: typ} }

	runVerifyCases(t, ProviderStandard, standardTestSecret, signer, []byte(standardTestBody), Message{ID: standardTestID, EventType: "ignored"}, []verifyCase{
		{name: "valid", want: valid},
		{name: "secret without whsec_ prefix", secrets: []string{strings.TrimPrefix(standardTestSecret, "whsec_")}, want: valid},
		{name: "rotation second secret matches", secrets: []string{"whsec_b2xkIHNlY3JldA==", standardTestSecret}, want: valid},
		{name: "several signatures", edit: sigHeader(other + " " + good), want: valid},
		{name: "v1a and junk ignored", edit: sigHeader("v1a,bm90IGFuIGVkMjU1MTkgc2ln junk v1,!!! v2," + goodB64 + "  " + good), want: valid},
		{name: "timestamp absent", edit: resignStandard(t, standardTestID, standardEvent(`"contact.created"`, "")), want: typeOnly(standardTestType)},
		{name: "timestamp not RFC 3339", edit: resignStandard(t, standardTestID, standardEvent(`"contact.created"`, `"timestamp":"yesterday"`)), want: typeOnly(standardTestType)},
		{name: "timestamp a number", edit: resignStandard(t, standardTestID, standardEvent(`"contact.created"`, `"timestamp":1709294400`)), want: typeOnly(standardTestType)},
		{name: "within custom tolerance", tolerance: time.Hour, now: testNow.Add(-59 * time.Minute), want: valid},

		{name: "wrong secret", secrets: []string{"whsec_d3Jvbmc="}, wantErr: ErrInvalidSignature, wantMsg: "no configured secret matches any v1 signature in webhook-signature"},
		{name: "secret text used as key", secrets: []string{base64.StdEncoding.EncodeToString([]byte(standardTestSecret))}, wantErr: ErrInvalidSignature},
		{name: "different body", edit: withBody(standardEvent(`"contact.deleted"`, "")), wantErr: ErrInvalidSignature},
		{name: "different id", edit: withHeader(standardIDHeader, "msg_other"), wantErr: ErrInvalidSignature},
		{name: "different timestamp", edit: withHeader(standardTimestampHeader, fmt.Sprint(testNow.Unix()+1)), wantErr: ErrInvalidSignature},

		{name: "missing id", edit: withHeader(standardIDHeader, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: webhook-id"},
		{name: "missing timestamp", edit: withHeader(standardTimestampHeader, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: webhook-timestamp"},
		{name: "missing signature", edit: withHeader(standardSignatureHeader, ""), wantErr: ErrMissingHeader, wantMsg: "missing header: webhook-signature"},
		{name: "timestamp not a number", edit: withHeader(standardTimestampHeader, "now"), wantErr: ErrInvalidSignature, wantMsg: "webhook-timestamp must be unix seconds"},
		{name: "timestamp in milliseconds form", edit: withHeader(standardTimestampHeader, fmt.Sprint(testNow.Unix())+".0"), wantErr: ErrInvalidSignature, wantMsg: "unix seconds"},
		{name: "timestamp with leading zero", edit: withHeader(standardTimestampHeader, "0"+fmt.Sprint(testNow.Unix())), wantErr: ErrInvalidSignature, wantMsg: "unix seconds"},
		{name: "signature without version", edit: sigHeader(goodB64), wantErr: ErrInvalidSignature, wantMsg: "no v1,<base64"},
		{name: "signature with = separator", edit: sigHeader("v1=" + goodB64), wantErr: ErrInvalidSignature, wantMsg: "no v1,"},
		{name: "only v1a", edit: sigHeader("v1a," + goodB64), wantErr: ErrInvalidSignature, wantMsg: "other versions are not accepted"},
		{name: "signature not base64", edit: sigHeader("v1,***"), wantErr: ErrInvalidSignature, wantMsg: "no v1,"},
		{name: "signature unpadded", edit: sigHeader("v1," + strings.TrimRight(goodB64, "=")), wantErr: ErrInvalidSignature},
		{name: "signature truncated", edit: sigHeader("v1," + base64.StdEncoding.EncodeToString([]byte("short"))), wantErr: ErrInvalidSignature},

		{name: "too old", now: testNow.Add(10 * time.Minute), wantErr: ErrTimestampOutOfTolerance, wantMsg: "webhook-timestamp is 10m0s in the past (tolerance 5m0s)"},
		{name: "too new", now: testNow.Add(-10 * time.Minute), wantErr: ErrTimestampOutOfTolerance, wantMsg: "webhook-timestamp is 10m0s in the future"},
		{name: "outside custom tolerance", tolerance: 30 * time.Second, now: testNow.Add(-31 * time.Second), wantErr: ErrTimestampOutOfTolerance, wantMsg: "tolerance 30s"},
		{name: "bad signature beats tolerance", secrets: []string{"whsec_d3Jvbmc="}, now: testNow.Add(time.Hour), wantErr: ErrInvalidSignature},
		{name: "tolerance beats payload", edit: resignStandard(t, standardTestID, "not json"), now: testNow.Add(time.Hour), wantErr: ErrTimestampOutOfTolerance},

		{name: "not JSON", edit: resignStandard(t, standardTestID, "not json"), wantErr: ErrInvalidPayload, wantMsg: "body is not a JSON object"},
		{name: "truncated JSON", edit: resignStandard(t, standardTestID, `{"type":"a"`), wantErr: ErrInvalidPayload, wantMsg: "body is not valid JSON"},
		{name: "type missing", edit: resignStandard(t, standardTestID, standardEvent("", "")), wantErr: ErrInvalidPayload, wantMsg: "body field type is missing"},
		{name: "type empty", edit: resignStandard(t, standardTestID, standardEvent(`""`, "")), wantErr: ErrInvalidPayload, wantMsg: "body field type is empty"},
		{name: "type a number", edit: resignStandard(t, standardTestID, standardEvent("7", "")), wantErr: ErrInvalidPayload, wantMsg: "body field type must be a string"},
		{name: "type too long", edit: resignStandard(t, standardTestID, standardEvent(`"`+strings.Repeat("t", 256)+`"`, "")), wantErr: ErrInvalidPayload, wantMsg: "body field type is 256 bytes long"},
		{name: "type with NUL", edit: resignStandard(t, standardTestID, standardEvent(`"a\u0000b"`, "")), wantErr: ErrInvalidPayload, wantMsg: "body field type contains a control character"},
		{name: "id too long", edit: resignStandard(t, strings.Repeat("m", 256), standardTestBody), wantErr: ErrInvalidPayload, wantMsg: "webhook-id header is 256 bytes long"},
		{name: "id with NUL", edit: resignStandard(t, "msg_\x00", standardTestBody), wantErr: ErrInvalidPayload, wantMsg: "webhook-id header contains a control character"},
		{name: "id invalid UTF-8", edit: resignStandard(t, "msg_\xc3", standardTestBody), wantErr: ErrInvalidPayload, wantMsg: "webhook-id header is not valid UTF-8"},
	})
}

// TestStandardReferenceVectors checks our verifier against the reference
// library's signer, and the reference library's verifier against our
// Signer, including the fixed vector from the library's own tests.
func TestStandardReferenceVectors(t *testing.T) {
	t.Parallel()

	t.Run("library test vector", func(t *testing.T) {
		t.Parallel()

		const (
			id      = "msg_p5jXN8AQM9LWM0D4loKWxJek"
			payload = `{"test": 2432232314}`
			want    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
		)
		ts := time.Unix(1614265330, 0)

		signer, err := NewSigner(ProviderStandard, standardTestSecret)
		require.NoError(t, err)
		header, err := signer.Sign([]byte(payload), Message{ID: id}, ts)
		require.NoError(t, err)
		require.Equal(t, want, header.Get(standardSignatureHeader))
		require.Equal(t, "1614265330", header.Get(standardTimestampHeader))
		require.Equal(t, id, header.Get(standardIDHeader))

		// The vector's payload has no type: the signature passes and the
		// payload check, which comes after it, fails.
		v := newTestVerifier(t, ProviderStandard, []string{standardTestSecret}, ts)
		_, err = v.Verify([]byte(payload), header)
		requireVerifyErr(t, err, ErrInvalidPayload, standardTestSecret, want)
		require.ErrorContains(t, err, "body field type is missing")
	})

	t.Run("library signs, we verify", func(t *testing.T) {
		t.Parallel()

		header := http.Header{}
		header.Set(standardwebhooks.HeaderWebhookID, standardTestID)
		header.Set(standardwebhooks.HeaderWebhookTimestamp, fmt.Sprint(testNow.Unix()))
		header.Set(standardwebhooks.HeaderWebhookSignature, standardSign(t, standardTestSecret, standardTestID, testNow, standardTestBody))

		v := newTestVerifier(t, ProviderStandard, []string{standardTestSecret}, testNow)
		got, err := v.Verify([]byte(standardTestBody), header)
		require.NoError(t, err)
		require.Equal(t, standardTestID, got.ID)
		require.Equal(t, standardTestType, got.EventType)
	})

	t.Run("we sign, library verifies", func(t *testing.T) {
		t.Parallel()

		wh, err := standardwebhooks.NewWebhook(standardTestSecret)
		require.NoError(t, err)
		signer, err := NewSigner(ProviderStandard, standardTestSecret)
		require.NoError(t, err)

		header, err := signer.Sign([]byte(standardTestBody), Message{ID: standardTestID}, testNow)
		require.NoError(t, err)
		require.Equal(t, "application/json", header.Get("Content-Type"))
		require.NoError(t, wh.VerifyIgnoringTimestamp([]byte(standardTestBody), header))
		require.Error(t, wh.VerifyIgnoringTimestamp([]byte(standardTestBody+" "), header))

		// The library checks tolerance against the real clock.
		header, err = signer.Sign([]byte(standardTestBody), Message{ID: standardTestID}, time.Now())
		require.NoError(t, err)
		require.NoError(t, wh.Verify([]byte(standardTestBody), header))

		// A bare base64 secret signs the same as its whsec_ form.
		bare, err := NewSigner(ProviderStandard, strings.TrimPrefix(standardTestSecret, "whsec_"))
		require.NoError(t, err)
		bareHeader, err := bare.Sign([]byte(standardTestBody), Message{ID: standardTestID}, testNow)
		require.NoError(t, err)
		require.NoError(t, wh.VerifyIgnoringTimestamp([]byte(standardTestBody), bareHeader))
	})
}

func TestStandardSign(t *testing.T) {
	t.Parallel()

	signer, err := NewSigner(ProviderStandard, standardTestSecret)
	require.NoError(t, err)
	_, err = signer.Sign([]byte(standardTestBody), Message{EventType: standardTestType}, testNow)
	require.ErrorContains(t, err, "Message.ID is required")
}

func TestParseStandardSignature(t *testing.T) {
	t.Parallel()

	a := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32)))
	b := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("b", 32)))
	tests := []struct {
		name   string
		header string
		want   []string // base64
	}{
		{name: "one", header: "v1," + a, want: []string{a}},
		{name: "two", header: "v1," + a + " v1," + b, want: []string{a, b}},
		{name: "extra whitespace", header: "  v1," + a + "\t v1," + b + " ", want: []string{a, b}},
		{name: "skips other versions and junk", header: "v1a," + b + " v2," + b + " v1 ,x v1,*** v1, ," + b + " v1," + a, want: []string{a}},
		{name: "empty", header: ""},
		{name: "no comma", header: "v1" + a},
		{name: "wrong length", header: "v1," + base64.StdEncoding.EncodeToString([]byte("short"))},
		{name: "trailing comma part", header: "v1," + a + ",extra"},
		{name: "uppercase version", header: "V1," + a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			var got []string
			for _, s := range parseStandardSignature(tt.header) {
				got = append(got, base64.StdEncoding.EncodeToString(s))
			}
			require.Equal(t, tt.want, got)
		})
	}
}
