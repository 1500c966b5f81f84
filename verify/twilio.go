package verify

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ProviderTwilio verifies X-Twilio-Signature: HMAC-SHA1, under the auth
// token, of the URL Twilio called followed by the form parameters sorted by
// name. A JSON body is signed through the URL: its SHA-256 is the query's
// bodySHA256. The source needs notification_url.
const ProviderTwilio = "twilio"

const twilioSignatureHeader = "X-Twilio-Signature"

// twilioFields: Twilio sends I-Twilio-Idempotency-Token with every webhook
// and repeats it on retries; the event type is whichever status field the
// webhook carries.
var twilioFields = preset{
	ids:   []Field{{Header: "I-Twilio-Idempotency-Token"}, {BodySHA256: true}},
	types: []Field{{JSON: "EventType"}, {JSON: "MessageStatus"}, {JSON: "SmsStatus"}, {JSON: "CallStatus"}, {JSON: "type"}},
}

// twilioDefaultType is the event type of a webhook that carries no status
// field (an incoming call's first request may not).
const twilioDefaultType = "webhook"

type twilioVerifier struct {
	tokens [][]byte
	url    *url.URL
	fields *hmacVerifier
}

func newTwilioVerifier(cfg Config) (Verifier, error) {
	u, err := url.Parse(cfg.NotificationURL)
	if cfg.NotificationURL == "" || err != nil || u.Host == "" {
		return nil, configErr("notification_url", "required for twilio: the URL Twilio calls, as configured at Twilio")
	}
	v := &twilioVerifier{url: u, fields: &hmacVerifier{ids: twilioFields.ids, types: twilioFields.types, allowForm: true,
		defaultType: twilioDefaultType}}
	for _, s := range cfg.Secrets {
		v.tokens = append(v.tokens, []byte(s))
	}
	return v, nil
}

func (v *twilioVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	return v.VerifyRequest(context.Background(), Request{Body: body, Header: header})
}

func (v *twilioVerifier) VerifyRequest(_ context.Context, r Request) (Delivery, error) {
	raw := headerValue(r.Header, twilioSignatureHeader)
	if raw == "" {
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, twilioSignatureHeader)
	}
	sig, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(sig) != sha1.Size {
		return Delivery{}, fmt.Errorf("%w: %s must be a base64 HMAC-SHA1", ErrInvalidSignature, twilioSignatureHeader)
	}
	signedURL := v.requestURL(r.RawQuery)
	form := isForm(headerValue(r.Header, "Content-Type"))
	var params string
	if form {
		if params, err = sortedParams(r.Body); err != nil {
			return Delivery{}, err
		}
	}
	if !v.matches(sig, signedURL, params) {
		return Delivery{}, fmt.Errorf("%w: no configured auth token matches %s over notification_url%s; check the auth token and notification_url",
			ErrInvalidSignature, twilioSignatureHeader, map[bool]string{true: " and the form parameters", false: ""}[form])
	}
	if !form {
		// The signature covers the URL only; the URL's bodySHA256 binds
		// the body to it.
		want, _ := url.ParseQuery(r.RawQuery)
		sum := sha256.Sum256(r.Body)
		got, err := hex.DecodeString(want.Get("bodySHA256"))
		if err != nil || !hmac.Equal(got, sum[:]) {
			return Delivery{}, fmt.Errorf("%w: a body that is not form-encoded must match the URL's bodySHA256", ErrInvalidSignature)
		}
	}
	return v.fields.extract(&document{body: r.Body, header: r.Header, allowForm: true})
}

// requestURL is notification_url with the query the request came with
// (bodySHA256 varies per request), or as configured when it came with none.
func (v *twilioVerifier) requestURL(rawQuery string) url.URL {
	u := *v.url
	if rawQuery != "" {
		u.RawQuery = rawQuery
	}
	return u
}

// matches tries the URL with and without its default port, as Twilio's
// libraries do: Twilio may sign either form.
func (v *twilioVerifier) matches(sig []byte, u url.URL, params string) bool {
	matched := false
	for _, candidate := range []string{u.String(), togglePort(u)} {
		for _, token := range v.tokens {
			matched = hmac.Equal(twilioMAC(token, candidate, params), sig) || matched
		}
	}
	return matched
}

func togglePort(u url.URL) string {
	if u.Port() != "" {
		u.Host = u.Hostname()
	} else {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return u.String()
}

func twilioMAC(token []byte, signedURL, params string) []byte {
	mac := hmac.New(sha1.New, token)
	mac.Write([]byte(signedURL))
	mac.Write([]byte(params))
	return mac.Sum(nil)
}

// sortedParams is Twilio's parameter string: each name followed by its
// value, names sorted (case-sensitive), a repeated name's values sorted.
func sortedParams(body []byte) (string, error) {
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidPayload, errNotForm)
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		vs := slices.Clone(vals[k])
		slices.Sort(vs)
		for _, val := range vs {
			b.WriteString(k)
			b.WriteString(val)
		}
	}
	return b.String(), nil
}

type twilioSigner struct {
	token []byte
	url   *url.URL
}

func newTwilioSigner(cfg Config) (Signer, error) {
	v, err := newTwilioVerifier(cfg)
	if err != nil {
		return nil, err
	}
	return &twilioSigner{token: []byte(cfg.Secrets[0]), url: v.(*twilioVerifier).url}, nil
}

// Sign signs a form body, posted to notification_url as configured. (A
// JSON body is signed through the URL's bodySHA256, which a Signer, giving
// only headers, cannot set.)
func (s *twilioSigner) Sign(body []byte, msg Message, _ time.Time) (http.Header, error) {
	if contentTypeOf(body) != "application/x-www-form-urlencoded" {
		return nil, errors.New("twilio: only form bodies can be signed here; a JSON body is signed through the URL's bodySHA256")
	}
	params, err := sortedParams(body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(twilioSignatureHeader, base64.StdEncoding.EncodeToString(twilioMAC(s.token, s.url.String(), params)))
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	if msg.ID != "" {
		h.Set("I-Twilio-Idempotency-Token", msg.ID)
	}
	return h, nil
}
