package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const stripeSignatureHeader = "Stripe-Signature"

type stripeVerifier struct {
	// Stripe keys the HMAC with the whole secret string, "whsec_" prefix
	// included; it is not base64 like Standard Webhooks secrets.
	secrets   [][]byte
	tolerance time.Duration
	now       func() time.Time
}

func newStripeVerifier(cfg Config) (Verifier, error) {
	v := &stripeVerifier{tolerance: cfg.Tolerance, now: cfg.Now}
	for _, s := range cfg.Secrets {
		v.secrets = append(v.secrets, []byte(s))
	}
	return v, nil
}

func (v *stripeVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	raw := headerValue(header, stripeSignatureHeader)
	if raw == "" {
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, stripeSignatureHeader)
	}
	ts, sigs, err := parseStripeSignature(raw)
	if err != nil {
		return Delivery{}, err
	}
	expected := make([][]byte, len(v.secrets))
	for i, secret := range v.secrets {
		expected[i] = stripeMAC(secret, ts, body)
	}
	if !anyEqual(expected, sigs) {
		return Delivery{}, fmt.Errorf("%w: no configured secret matches any v1 signature in %s; check the endpoint's signing secret",
			ErrInvalidSignature, stripeSignatureHeader)
	}
	// stripe-go only bounds the past; a future t is refused too.
	if err := checkTolerance(stripeSignatureHeader+" timestamp", ts, v.now(), v.tolerance); err != nil {
		return Delivery{}, err
	}

	var event struct {
		ID      json.RawMessage `json:"id"`
		Type    json.RawMessage `json:"type"`
		Created json.RawMessage `json:"created"`
	}
	if err := decodeObject(body, &event); err != nil {
		return Delivery{}, err
	}
	id, err := stringField(event.ID, "id")
	if err != nil {
		return Delivery{}, err
	}
	eventType, err := stringField(event.Type, "type")
	if err != nil {
		return Delivery{}, err
	}
	return Delivery{ID: id, EventType: eventType, OccurredAt: unixField(event.Created)}, nil
}

// unixField reads optional unix seconds. Anything else reads as zero rather
// than failing: the time is informational and the event is already verified.
func unixField(raw json.RawMessage) time.Time {
	var secs int64
	if err := json.Unmarshal(raw, &secs); err != nil || secs <= 0 {
		return time.Time{}
	}
	return time.Unix(secs, 0).UTC()
}

// stripeMAC signs "<t>.<body>" as Stripe does.
func stripeMAC(secret []byte, ts int64, body []byte) []byte {
	return signHMAC(secret, []byte(strconv.FormatInt(ts, 10)), []byte("."), body)
}

// parseStripeSignature reads "t=<unix>,v1=<hex>[,v1=<hex>...]". Stripe may
// add other schemes (v0 in test mode) and items in future, so unknown or
// malformed items are skipped rather than failing the whole header; only a
// missing t or v1 is an error. Several v1 entries appear while an endpoint
// secret is being rolled.
func parseStripeSignature(header string) (ts int64, sigs [][]byte, err error) {
	haveTS := false
	for item := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		switch key {
		case "t":
			t, ok := parseUnixSeconds(value)
			if !ok {
				continue
			}
			// Two different signed times cannot both be honest; refuse
			// rather than pick one.
			if haveTS && t != ts {
				return 0, nil, fmt.Errorf("%w: %s has more than one t= timestamp", ErrInvalidSignature, stripeSignatureHeader)
			}
			ts, haveTS = t, true
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				continue
			}
			sigs = append(sigs, sig)
		}
	}
	if !haveTS {
		return 0, nil, fmt.Errorf("%w: %s has no t=<unix seconds> timestamp", ErrInvalidSignature, stripeSignatureHeader)
	}
	if len(sigs) == 0 {
		return 0, nil, fmt.Errorf("%w: %s has no v1=<hex HMAC-SHA256> signature (other schemes are not accepted)",
			ErrInvalidSignature, stripeSignatureHeader)
	}
	return ts, sigs, nil
}

type stripeSigner struct {
	secret []byte
}

func newStripeSigner(cfg Config) (Signer, error) {
	return &stripeSigner{secret: []byte(cfg.Secrets[0])}, nil
}

// Sign ignores msg: Stripe's event id and type live in the body.
func (s *stripeSigner) Sign(body []byte, _ Message, now time.Time) (http.Header, error) {
	ts, err := signTime(now)
	if err != nil {
		return nil, fmt.Errorf("stripe: %w", err)
	}
	h := http.Header{}
	h.Set(stripeSignatureHeader, fmt.Sprintf("t=%d,v1=%s", ts, hex.EncodeToString(stripeMAC(s.secret, ts, body))))
	h.Set("Content-Type", "application/json; charset=utf-8")
	return h, nil
}
