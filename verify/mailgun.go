package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"
)

// ProviderMailgun verifies Mailgun's webhooks, which carry their signature
// in the JSON body: signature.signature is the hex HMAC-SHA256, under the
// webhook signing key, of signature.timestamp followed by signature.token.
//
// The signature does not cover event-data, so the token is the delivery
// id: a request replaying a seen token is a duplicate (the same body) or a
// conflict (another body), and never a new delivery.
const ProviderMailgun = "mailgun"

var mailgunFields = preset{
	ids:      []Field{{JSON: "signature.token"}},
	types:    []Field{{JSON: "event-data.event"}},
	occurred: []Field{{JSON: "event-data.timestamp"}},
	Resource: "event-data.message.headers.message-id",
}

type mailgunVerifier struct {
	keys      [][]byte
	tolerance time.Duration
	now       func() time.Time
	fields    *hmacVerifier
}

func newMailgunVerifier(cfg Config) (Verifier, error) {
	v := &mailgunVerifier{tolerance: cfg.Tolerance, now: cfg.Now,
		fields: &hmacVerifier{ids: mailgunFields.ids, types: mailgunFields.types, occurred: mailgunFields.occurred}}
	for _, s := range cfg.Secrets {
		v.keys = append(v.keys, []byte(s))
	}
	return v, nil
}

func (v *mailgunVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	doc := &document{body: body, header: header}
	var parts [3]string
	for i, name := range []string{"timestamp", "token", "signature"} {
		val, err := doc.value(Field{JSON: "signature." + name})
		if err != nil {
			return Delivery{}, err
		}
		if val == "" {
			return Delivery{}, fmt.Errorf("%w: the body has no signature.%s (Mailgun signs in the body: signature.timestamp, .token, .signature)",
				ErrInvalidSignature, name)
		}
		parts[i] = val
	}
	sig, err := hex.DecodeString(parts[2])
	if err != nil || len(sig) != sha256.Size {
		return Delivery{}, fmt.Errorf("%w: signature.signature must be %d hex digits", ErrInvalidSignature, 2*sha256.Size)
	}
	matched := false
	for _, key := range v.keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(parts[0]))
		mac.Write([]byte(parts[1]))
		matched = hmac.Equal(mac.Sum(nil), sig) || matched
	}
	if !matched {
		return Delivery{}, fmt.Errorf("%w: no configured signing key matches signature.signature; check the webhook signing key", ErrInvalidSignature)
	}
	ts, ok := parseUnixSeconds(parts[0])
	if !ok {
		return Delivery{}, fmt.Errorf("%w: signature.timestamp must be unix seconds", ErrInvalidSignature)
	}
	if err := checkTolerance("signature.timestamp", ts, v.now(), v.tolerance); err != nil {
		return Delivery{}, err
	}
	return v.fields.extract(doc)
}
