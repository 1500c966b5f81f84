package verify

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// newHMACSigner signs as cfg.HMAC describes.
func newHMACSigner(cfg Config) (Signer, error) {
	v, err := newHMACVerifier(cfg)
	if err != nil {
		return nil, err
	}
	return &hmacSigner{v: v.(*hmacVerifier)}, nil
}

// hmacSigner signs as an HMACScheme sender does, with the first key.
type hmacSigner struct {
	v *hmacVerifier
}

// Sign puts msg.ID and msg.EventType in their headers where the scheme
// reads them from headers, and the time where the scheme signs one.
// Schemes whose timestamp is in the body sign the body as it is.
func (s *hmacSigner) Sign(body []byte, msg Message, now time.Time) (http.Header, error) {
	sc := s.v.scheme
	h := http.Header{}
	var parts signedParts
	if sc.ID.Header != "" {
		if msg.ID == "" {
			return nil, fmt.Errorf("Message.ID is required (sent as %s)", sc.ID.Header)
		}
		h.Set(sc.ID.Header, msg.ID)
		parts.id = msg.ID
	}
	if sc.EventType.Header != "" {
		if msg.EventType == "" {
			return nil, fmt.Errorf("Message.EventType is required (sent as %s)", sc.EventType.Header)
		}
		h.Set(sc.EventType.Header, msg.EventType)
	}
	if ts := sc.Timestamp; ts != nil && ts.JSON == "" {
		secs, err := signTime(now)
		if err != nil {
			return nil, err
		}
		if ts.Unit == "ms" {
			secs *= 1000
		}
		parts.timestamp = strconv.FormatInt(secs, 10)
		if ts.Header != "" {
			h.Set(ts.Header, parts.timestamp)
		}
	}
	sig := sc.SignaturePrefix + signatureEncodings[sc.Encoding].encode(s.v.sign(s.v.keys[0], body, parts))
	if sc.SignaturePart != "" {
		sig = sc.SignaturePart + "=" + sig
		if ts := sc.Timestamp; ts != nil && ts.SignaturePart != "" {
			sig = ts.SignaturePart + "=" + parts.timestamp + sc.SignatureSeparator + sig
		}
	}
	h.Set(sc.SignatureHeader, sig)
	h.Set("Content-Type", contentTypeOf(body))
	return h, nil
}

// contentTypeOf guesses what a sender would declare for body.
func contentTypeOf(body []byte) string {
	if t := trimJSONSpace(body); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return "application/json"
	}
	return "application/x-www-form-urlencoded"
}
