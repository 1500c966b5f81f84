package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The fuzz targets check two things beyond "does not panic": every error
// matches exactly one Verify sentinel, and every success is backed by a
// signature recomputed here with crypto/hmac, independently of our code.

// fuzzHMAC is HMAC-SHA256 over the concatenated parts.
func fuzzHMAC(key []byte, parts ...string) []byte {
	mac := hmac.New(sha256.New, key)
	for _, p := range parts {
		mac.Write([]byte(p))
	}
	return mac.Sum(nil)
}

func FuzzParseGitHubSignature(f *testing.F) {
	good := strings.Repeat("0f", sha256.Size)
	for _, seed := range []string{
		"sha256=" + good,
		"sha256=" + strings.ToUpper(good),
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		"sha1=" + strings.Repeat("0f", 20),
		"sha512=" + strings.Repeat("0f", 64),
		"sha256=", "sha256", "", good, "sha256=" + good[:63], "sha256=" + good + "0",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		mac, err := parseGitHubSignature(header)
		if err != nil {
			requireVerifyErr(t, err, ErrInvalidSignature)
			require.Nil(t, mac)
			return
		}
		require.Len(t, mac, sha256.Size)
		require.True(t, strings.HasPrefix(header, "sha256="))
		require.True(t, strings.EqualFold(header, "sha256="+hex.EncodeToString(mac)))
	})
}

func FuzzParseStripeSignature(f *testing.F) {
	a, b := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	for _, seed := range []string{
		"t=1709294400,v1=" + a,
		"t=1709294400,v1=" + a + ",v1=" + b + ",v0=" + b,
		"v1=" + a + ",t=1",
		"t=1,t=2,v1=" + a,
		"t=01,v1=" + a,
		"t=-1,v1=" + a,
		"t=1, v1=" + a + " ,x,,=,==",
		"t=1,v1=" + a[:63],
		"", ",", "t=", "v1=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		ts, sigs, err := parseStripeSignature(header)
		if err != nil {
			requireVerifyErr(t, err, ErrInvalidSignature)
			require.Nil(t, sigs)
			return
		}
		require.GreaterOrEqual(t, ts, int64(0))
		require.Contains(t, header, fmt.Sprintf("t=%d", ts))
		require.NotEmpty(t, sigs)
		lower := strings.ToLower(header)
		for _, sig := range sigs {
			require.Len(t, sig, sha256.Size)
			require.Contains(t, lower, "v1="+hex.EncodeToString(sig))
		}
	})
}

func FuzzParseStandardSignature(f *testing.F) {
	a := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32)))
	for _, seed := range []string{
		"v1," + a,
		"v1," + a + " v1a," + a + " v2," + a,
		"  v1," + a + "\tv1,***",
		"v1," + a + ",x",
		"v1," + strings.TrimRight(a, "="),
		"v1,", ",", "v1", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		sigs := parseStandardSignature(header)
		require.LessOrEqual(t, len(sigs), strings.Count(header, "v1,"))
		var canonical []string
		for _, sig := range sigs {
			require.Len(t, sig, sha256.Size)
			canonical = append(canonical, "v1,"+base64.StdEncoding.EncodeToString(sig))
		}
		// Parsing the canonical form of what we found finds the same.
		again := parseStandardSignature(strings.Join(canonical, " "))
		require.Equal(t, len(sigs), len(again))
		for i := range sigs {
			require.Equal(t, sigs[i], again[i])
		}
	})
}

func FuzzVerifyGitHub(f *testing.F) {
	v, err := New(Config{Provider: ProviderGitHub, Secrets: []string{"gh-old-secret", gitHubTestSecret}})
	require.NoError(f, err)

	good := hex.EncodeToString(fuzzHMAC([]byte(gitHubTestSecret), gitHubTestBody))
	f.Add([]byte(gitHubTestBody), gitHubTestID, gitHubTestEvent, "sha256="+good, false)
	f.Add([]byte(gitHubTestBody), gitHubTestID, gitHubTestEvent, "", true)
	f.Add([]byte("payload=%7B%7D"), gitHubTestID, "push", "", true)
	f.Add([]byte(`[1]`), "id\x00", "push", "", true)
	f.Add([]byte(`{}`), strings.Repeat("i", 256), "push", "", true)
	f.Add([]byte(`{"a":`), gitHubTestID, "ping", "sha1=00", false)
	f.Add([]byte(""), "", "", "", false)

	// sign replaces sig with the correct signature, so the fuzzer also
	// reaches the checks that follow the signature.
	f.Fuzz(func(t *testing.T, body []byte, id, event, sig string, sign bool) {
		if sign {
			sig = "sha256=" + hex.EncodeToString(fuzzHMAC([]byte(gitHubTestSecret), string(body)))
		}
		header := http.Header{}
		header.Set(gitHubDeliveryHeader, id)
		header.Set(gitHubEventHeader, event)
		header.Set(gitHubSignatureHeader, sig)

		got, err := v.Verify(body, header)
		if err != nil {
			requireOneVerifyErr(t, err, gitHubTestSecret, good)
			return
		}
		mac, decErr := hex.DecodeString(strings.TrimPrefix(sig, "sha256="))
		require.NoError(t, decErr)
		require.True(t, strings.HasPrefix(sig, "sha256="))
		require.True(t, hmac.Equal(mac, fuzzHMAC([]byte(gitHubTestSecret), string(body))) ||
			hmac.Equal(mac, fuzzHMAC([]byte("gh-old-secret"), string(body))), "accepted a signature no secret produced")
		require.Equal(t, Delivery{ID: id, EventType: event}, got)
		requireStorableDelivery(t, got)
	})
}

func FuzzVerifyStripe(f *testing.F) {
	v, err := New(Config{Provider: ProviderStripe, Secrets: []string{stripeTestSecret}, Now: func() time.Time { return testNow }})
	require.NoError(f, err)

	ts := testNow.Unix()
	good := hex.EncodeToString(fuzzHMAC([]byte(stripeTestSecret), fmt.Sprint(ts), ".", stripeTestBody))
	f.Add([]byte(stripeTestBody), fmt.Sprintf("t=%d,v1=%s", ts, good), false, int64(0))
	f.Add([]byte(stripeTestBody), "", true, int64(0))
	f.Add([]byte(stripeTestBody), "", true, int64(-301))
	f.Add([]byte(stripeTestBody), "", true, int64(1<<62))
	f.Add([]byte(`{"id":"evt_\u0000","type":"x"}`), "", true, int64(0))
	f.Add([]byte(`{"id":1,"type":"x","created":"x"}`), "", true, int64(0))
	f.Add([]byte(`{"id":"evt","type":"x","created":-1}`), "", true, int64(5))
	f.Add([]byte("not json"), "t=x,v1=y", false, int64(0))

	f.Fuzz(func(t *testing.T, body []byte, sig string, sign bool, offset int64) {
		if sign {
			signTS := ts + min(max(offset, -ts), 1<<40) // no overflow, no negatives
			sig = fmt.Sprintf("t=%d,v1=%s", signTS, hex.EncodeToString(fuzzHMAC([]byte(stripeTestSecret), fmt.Sprint(signTS), ".", string(body))))
		}
		header := http.Header{}
		header.Set(stripeSignatureHeader, sig)

		got, err := v.Verify(body, header)
		if err != nil {
			requireOneVerifyErr(t, err, stripeTestSecret, good)
			return
		}
		signTS, sigs, perr := parseStripeSignature(sig)
		require.NoError(t, perr)
		want := fuzzHMAC([]byte(stripeTestSecret), fmt.Sprint(signTS), ".", string(body))
		matched := false
		for _, s := range sigs {
			matched = matched || hmac.Equal(s, want)
		}
		require.True(t, matched, "accepted a signature the secret did not produce")
		require.LessOrEqual(t, max(signTS-ts, ts-signTS), int64(DefaultTolerance/time.Second))
		requireStorableDelivery(t, got)
	})
}

func FuzzVerifyStandard(f *testing.F) {
	v, err := New(Config{Provider: ProviderStandard, Secrets: []string{standardTestSecret}, Now: func() time.Time { return testNow }})
	require.NoError(f, err)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(standardTestSecret, "whsec_"))
	require.NoError(f, err)

	ts := fmt.Sprint(testNow.Unix())
	good := base64.StdEncoding.EncodeToString(fuzzHMAC(key, standardTestID, ".", ts, ".", standardTestBody))
	f.Add([]byte(standardTestBody), standardTestID, ts, "v1,"+good, false)
	f.Add([]byte(standardTestBody), standardTestID, ts, "", true)
	f.Add([]byte(standardTestBody), standardTestID, "0"+ts, "", true)
	f.Add([]byte(standardTestBody), standardTestID, "+"+ts, "", true)
	f.Add([]byte(standardTestBody), "msg\x00", ts, "", true)
	f.Add([]byte(`{"type":"a","timestamp":"2024-13-01T00:00:00Z"}`), "m", ts, "", true)
	f.Add([]byte(`{"type":null}`), "m", "99999999999999999999", "", true)
	f.Add([]byte("[]"), "", "", "v1a,x v1,y", false)

	f.Fuzz(func(t *testing.T, body []byte, id, rawTS, sig string, sign bool) {
		if sign {
			sig = "v1," + base64.StdEncoding.EncodeToString(fuzzHMAC(key, id, ".", rawTS, ".", string(body)))
		}
		header := http.Header{}
		header.Set(standardIDHeader, id)
		header.Set(standardTimestampHeader, rawTS)
		header.Set(standardSignatureHeader, sig)

		got, err := v.Verify(body, header)
		if err != nil {
			requireOneVerifyErr(t, err, standardTestSecret, good)
			return
		}
		want := fuzzHMAC(key, id, ".", rawTS, ".", string(body))
		matched := false
		for _, s := range parseStandardSignature(sig) {
			matched = matched || hmac.Equal(s, want)
		}
		requireAcceptedFresh(t, matched, rawTS, id, got)
	})
}

// requireAcceptedFresh checks an accepted delivery: a secret made one of
// its signatures (matched), its signed time rawTS is within the default
// tolerance of testNow, and it carries id, storable.
func requireAcceptedFresh(t *testing.T, matched bool, rawTS, id string, got Delivery) {
	t.Helper()
	require.True(t, matched, "accepted a signature no secret produced")
	ts, ok := parseUnixSeconds(rawTS)
	require.True(t, ok)
	require.LessOrEqual(t, max(ts-testNow.Unix(), testNow.Unix()-ts), int64(DefaultTolerance/time.Second))
	require.Equal(t, id, got.ID)
	requireStorableDelivery(t, got)
}

// requireOneVerifyErr finds the one sentinel err matches and checks it
// matches no other and leaks nothing.
func requireOneVerifyErr(t *testing.T, err error, leaks ...string) {
	t.Helper()
	for _, sentinel := range verifyErrors {
		if errors.Is(err, sentinel) {
			requireVerifyErr(t, err, sentinel, leaks...)
			return
		}
	}
	require.Failf(t, "error matches no Verify sentinel", "%v", err)
}

// requireStorableDelivery checks what checkID promises, without checkID.
func requireStorableDelivery(t *testing.T, d Delivery) {
	t.Helper()
	for _, s := range []string{d.ID, d.EventType} {
		require.NotEmpty(t, s)
		require.LessOrEqual(t, len(s), MaxIDLength)
		require.True(t, utf8.ValidString(s), "not valid UTF-8")
		for _, r := range s {
			require.False(t, r < 0x20 || (r >= 0x7f && r < 0xa0), "control character %U", r)
		}
	}
}

// FuzzParseTemplate: a template either fails, or parses into segments that
// spell it back and hold {body} exactly once.
func FuzzParseTemplate(f *testing.F) {
	for _, seed := range []string{
		"{body}", "{id}.{timestamp}.{body}", "v0:{timestamp}:{body}", "{url}{body}", "{method} {url}\n{body}",
		"", "{", "}", "{}", "{body", "body}", "{body}{body}", "{{body}}", "{nonce}{body}", "a{body}b{id}c",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		segs, err := parseTemplate(tmpl)
		if err != nil {
			require.Nil(t, segs)
			return
		}
		var b strings.Builder
		bodies := 0
		for _, s := range segs {
			if s.placeholder == "" {
				require.NotEmpty(t, s.literal)
				require.NotContains(t, s.literal, "{")
				require.NotContains(t, s.literal, "}")
				b.WriteString(s.literal)
				continue
			}
			require.Empty(t, s.literal)
			require.Contains(t, []string{phBody, phID, phTimestamp, phURL, phMethod}, s.placeholder)
			if s.placeholder == phBody {
				bodies++
			}
			b.WriteString("{" + s.placeholder + "}")
		}
		require.Equal(t, tmpl, b.String())
		require.Equal(t, 1, bodies)
	})
}

// FuzzVerifyHMAC drives the declarative scheme with arbitrary signature
// headers, parts, timestamps and bodies. Every success is backed by an
// HMAC recomputed here from the documented template, and a timestamp
// within tolerance.
func FuzzVerifyHMAC(f *testing.F) {
	scheme := &HMACScheme{
		SignatureHeader: "X-Sig", SignatureSeparator: ";", SignaturePart: "h1", SignaturePrefix: "",
		SignedContent: "{id}:{timestamp}:{body}", Algorithm: "sha256", Encoding: "hex",
		ID: Field{Header: "X-Id"}, EventType: Field{JSON: "type"},
		Timestamp: &Field{SignaturePart: "ts", Signed: true}, OccurredAt: &Field{JSON: "at"},
	}
	const secret = "fuzz-secret"
	v, err := New(Config{Provider: ProviderHMAC, HMAC: scheme, Secrets: []string{"old", secret}, Now: func() time.Time { return testNow }})
	require.NoError(f, err)
	ts := fmt.Sprint(testNow.Unix())
	body := `{"type":"a.b","at":"2024-03-01T00:00:00Z"}`
	good := hex.EncodeToString(fuzzHMAC([]byte(secret), "id1", ":", ts, ":", body))
	f.Add([]byte(body), "id1", "ts="+ts+";h1="+good, false, int64(0))
	f.Add([]byte(body), "id1", "", true, int64(0))
	f.Add([]byte(body), "id1", "", true, int64(-400))
	f.Add([]byte(`{"type":7}`), "id\x00", "", true, int64(0))
	f.Add([]byte(`type=x`), "i", "ts=1;ts=2;h1=", false, int64(0))
	f.Add([]byte(`{"type":{"x":1}}`), strings.Repeat("i", 300), "", true, int64(1<<40))

	f.Fuzz(func(t *testing.T, body []byte, id, sig string, sign bool, offset int64) {
		if sign {
			signTS := fmt.Sprint(testNow.Unix() + min(max(offset, -testNow.Unix()), 1<<40))
			sig = "ts=" + signTS + ";h1=" + hex.EncodeToString(fuzzHMAC([]byte(secret), id, ":", signTS, ":", string(body)))
		}
		header := http.Header{}
		header.Set("X-Id", id)
		header.Set("X-Sig", sig)
		got, err := v.Verify(body, header)
		if err != nil {
			requireOneVerifyErr(t, err, secret, good)
			return
		}
		// Find the signed time and a signature the secrets made, without
		// the verifier's parser.
		var signTS string
		var macs []string
		for item := range strings.SplitSeq(sig, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(item), "=")
			switch k {
			case "ts":
				signTS = val
			case "h1":
				macs = append(macs, strings.ToLower(val))
			}
		}
		matched := false
		for _, key := range []string{"old", secret} {
			want := hex.EncodeToString(fuzzHMAC([]byte(key), id, ":", signTS, ":", string(body)))
			for _, m := range macs {
				matched = matched || m == want
			}
		}
		requireAcceptedFresh(t, matched, signTS, id, got)
	})
}

// FuzzVerifyPresets drives every preset with arbitrary bodies, ids and
// event types, signed by our signer or not at all: an error matches one
// sentinel and leaks nothing, an unsigned request never verifies, and a
// verified one is storable (or a handshake).
func FuzzVerifyPresets(f *testing.F) {
	names := make([]string, 0, len(presets))
	for name := range presets {
		names = append(names, name)
	}
	slices.Sort(names)
	f.Add(uint8(0), []byte(`{"id":"evt_1","event_id":"evt_1","type":"a.b","event_type":"a.b","event":"a.b","topic":"a.b"}`), "id-1", "a.b", true)
	f.Add(uint8(1), []byte(`token=x&command=%2Fdo&payload=%7B%22type%22%3A%22block_actions%22%7D`), "id-2", "x", true)
	f.Add(uint8(2), []byte(`{"type":"url_verification","challenge":"c"}`), "", "", true)
	f.Add(uint8(3), []byte(`{"event":"endpoint.url_validation","payload":{"plainToken":"p"}}`), "i", "e", true)
	f.Add(uint8(4), []byte(`{"id":"\u0000"}`), "\x00", "\xff", true)
	f.Add(uint8(5), []byte(`[]`), "", "", false)
	f.Fuzz(func(t *testing.T, which uint8, body []byte, id, event string, sign bool) {
		name := names[int(which)%len(names)]
		secret := "fuzz-preset-secret"
		if presets[name].scheme.SecretEncoding == "whsec" {
			secret = standardTestSecret
		}
		cfg := Config{Provider: name, Secrets: []string{secret}, NotificationURL: "https://hooks.example.com/x", Now: func() time.Time { return testNow }}
		v, err := New(cfg)
		require.NoError(t, err)
		h := http.Header{"Content-Type": {contentTypeOf(body)}}
		if sign {
			signer, err := NewConfigSigner(cfg)
			require.NoError(t, err)
			if h, err = signer.Sign(body, Message{ID: id, EventType: event}, testNow); err != nil {
				return // the signer needs an id or type the fuzzer left empty
			}
		}
		got, err := v.Verify(body, h)
		if err != nil {
			requireOneVerifyErr(t, err, secret)
			return
		}
		require.True(t, sign, "%s verified an unsigned request", name)
		if got.Reply == nil {
			requireStorableDelivery(t, got)
		}
	})
}
