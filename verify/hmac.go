package verify

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"time"
)

// hmacVerifier verifies one HMACScheme. Presets add alternatives for the id
// and event type, and a handshake.
type hmacVerifier struct {
	scheme    HMACScheme
	segments  []segment
	newHash   func() hash.Hash
	size      int
	decode    func(string) ([]byte, error)
	keys      [][]byte
	url       string
	tolerance time.Duration
	now       func() time.Time

	ids      []Field // the first present wins
	types    []Field
	occurred []Field // the first that reads as a time wins
	// defaultType is the event type when no field of types is present;
	// "": none is an error.
	defaultType string
	handshake   func(doc *document, key []byte) (*Reply, error)
	// allowForm reads form-encoded bodies as their fields.
	allowForm bool
}

func newHMACVerifier(cfg Config) (Verifier, error) {
	if cfg.HMAC == nil {
		return nil, configErr("hmac", "required for provider hmac: it describes the scheme")
	}
	return buildHMACVerifier(cfg, *cfg.HMAC)
}

// buildHMACVerifier validates scheme and decodes cfg's secrets into keys.
func buildHMACVerifier(cfg Config, scheme HMACScheme) (*hmacVerifier, error) {
	s := scheme.withDefaults()
	if err := s.validate(cfg.NotificationURL); err != nil {
		return nil, err
	}
	segs, _ := parseTemplate(s.SignedContent)
	v := &hmacVerifier{
		scheme: s, segments: segs, newHash: hashes[s.Algorithm], decode: signatureEncodings[s.Encoding].decode,
		url: cfg.NotificationURL, tolerance: cfg.Tolerance, now: cfg.Now,
		ids: []Field{s.ID}, types: []Field{s.EventType}, allowForm: true,
	}
	if s.OccurredAt != nil {
		v.occurred = []Field{*s.OccurredAt}
	}
	v.size = v.newHash().Size()
	for i, secret := range cfg.Secrets {
		key, err := secretEncodings[s.SecretEncoding](secret)
		if err != nil || len(key) == 0 {
			// The secret itself never appears in the message.
			return nil, configErr("secrets", "secret %d of %d is not a %s secret (hmac.secret_encoding)", i+1, len(cfg.Secrets), s.SecretEncoding)
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

// signedParts is what a request puts into the signed content besides the
// body.
type signedParts struct {
	id, timestamp string
}

func (v *hmacVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	s := v.scheme
	values := headerValues(header, s.SignatureHeader)
	if len(values) == 0 {
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, s.SignatureHeader)
	}
	var parts signedParts
	if s.ID.Header != "" && v.signs(phID) {
		if parts.id = headerValue(header, s.ID.Header); parts.id == "" {
			return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, s.ID.Header)
		}
	}
	ts := s.Timestamp
	if ts != nil && ts.Header != "" {
		if parts.timestamp = headerValue(header, ts.Header); parts.timestamp == "" {
			return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, ts.Header)
		}
	}
	sigs, partTS, err := v.parseSignatures(values)
	if err != nil {
		return Delivery{}, err
	}
	if ts != nil && ts.SignaturePart != "" {
		if partTS == "" {
			return Delivery{}, fmt.Errorf("%w: %s has no %s=<timestamp> item", ErrInvalidSignature, s.SignatureHeader, ts.SignaturePart)
		}
		parts.timestamp = partTS
	}
	key, ok := v.match(body, parts, sigs)
	if !ok {
		return Delivery{}, fmt.Errorf("%w: no configured secret matches any signature in %s; check the signing secret",
			ErrInvalidSignature, s.SignatureHeader)
	}

	doc := &document{body: body, header: header, allowForm: v.allowForm}
	if ts != nil {
		if err := v.checkTimestamp(doc, parts.timestamp); err != nil {
			return Delivery{}, err
		}
	}
	if v.handshake != nil {
		reply, err := v.handshake(doc, key)
		if err != nil || reply != nil {
			return Delivery{Reply: reply}, err
		}
	}
	return v.extract(doc)
}

func (v *hmacVerifier) signs(placeholder string) bool {
	for _, seg := range v.segments {
		if seg.placeholder == placeholder {
			return true
		}
	}
	return false
}

// parseSignatures decodes every candidate signature of the header's values
// and returns the timestamp item, for schemes that carry one. Candidates
// without the prefix, undecodable or of the wrong length are skipped: a
// sender may list other versions or schemes next to ours.
func (v *hmacVerifier) parseSignatures(values []string) (sigs [][]byte, ts string, err error) {
	s := v.scheme
	var tsPart string
	if s.Timestamp != nil {
		tsPart = s.Timestamp.SignaturePart
	}
	for _, value := range values {
		items := []string{value}
		if s.SignatureSeparator != "" {
			items = strings.Split(value, s.SignatureSeparator)
		}
		for _, item := range items {
			item = strings.TrimSpace(item)
			if s.SignaturePart != "" {
				k, val, ok := strings.Cut(item, "=")
				switch {
				case !ok:
					continue
				case tsPart != "" && k == tsPart:
					// Two different signed times cannot both be honest.
					if ts != "" && ts != val {
						return nil, "", fmt.Errorf("%w: %s has more than one %s= item", ErrInvalidSignature, s.SignatureHeader, tsPart)
					}
					ts = val
					continue
				case k != s.SignaturePart:
					continue
				}
				item = val
			}
			raw, ok := strings.CutPrefix(item, s.SignaturePrefix)
			if !ok && s.prefixOptional {
				raw, ok = item, true
			}
			if !ok || raw == "" {
				continue
			}
			sig, err := v.decode(raw)
			if err != nil || len(sig) != v.size {
				continue
			}
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 {
		return nil, "", fmt.Errorf("%w: %s has no %s signature of %d bytes%s", ErrInvalidSignature, s.SignatureHeader,
			s.Encoding, v.size, v.describePrefix())
	}
	return sigs, ts, nil
}

func (v *hmacVerifier) describePrefix() string {
	s := v.scheme
	switch {
	case s.SignaturePart != "" && s.SignaturePrefix != "":
		return fmt.Sprintf(" in a %s=%s… item", s.SignaturePart, s.SignaturePrefix)
	case s.SignaturePart != "":
		return fmt.Sprintf(" in a %s=… item", s.SignaturePart)
	case s.SignaturePrefix != "":
		return fmt.Sprintf(" after %q", s.SignaturePrefix)
	}
	return ""
}

// match returns the key whose signature over the request is among sigs,
// comparing each pair in constant time.
func (v *hmacVerifier) match(body []byte, parts signedParts, sigs [][]byte) ([]byte, bool) {
	for _, key := range v.keys {
		expected := v.sign(key, body, parts)
		for _, sig := range sigs {
			if hmac.Equal(expected, sig) {
				return key, true
			}
		}
	}
	return nil, false
}

// sign computes the scheme's HMAC of the request under key.
func (v *hmacVerifier) sign(key, body []byte, parts signedParts) []byte {
	mac := hmac.New(v.newHash, key)
	for _, seg := range v.segments {
		switch seg.placeholder {
		case "":
			mac.Write([]byte(seg.literal))
		case phBody:
			mac.Write(body)
		case phID:
			mac.Write([]byte(parts.id))
		case phTimestamp:
			mac.Write([]byte(parts.timestamp))
		case phURL:
			mac.Write([]byte(v.url))
		case phMethod:
			mac.Write([]byte(http.MethodPost))
		}
	}
	return mac.Sum(nil)
}

// checkTimestamp reads the scheme's timestamp (raw: from a header or a
// signature part) and checks it against the tolerance, both ways.
func (v *hmacVerifier) checkTimestamp(doc *document, raw string) error {
	f := *v.scheme.Timestamp
	label := f.where()
	if f.JSON != "" {
		val, err := doc.lookup(f.JSON)
		if err != nil {
			return err
		}
		s, ok := scalarString(val)
		if !ok {
			return fmt.Errorf("%w: %s is missing or not a number", ErrInvalidPayload, label)
		}
		raw = s
	}
	n, ok := parseUnixSeconds(raw)
	if !ok {
		// A signed timestamp that is not canonical is a malformed
		// signature; an unsigned one, a malformed payload.
		sentinel := ErrInvalidPayload
		if f.Signed && f.JSON == "" {
			sentinel = ErrInvalidSignature
		}
		return fmt.Errorf("%w: %s must be unix %s", sentinel, label, unitName(f.Unit))
	}
	if f.Unit == "ms" {
		n /= 1000
	}
	return checkTolerance(label, n, v.now(), v.tolerance)
}

func unitName(unit string) string {
	if unit == "ms" {
		return "milliseconds"
	}
	return "seconds"
}

// extract reads the delivery id, event type and time of a verified request.
func (v *hmacVerifier) extract(doc *document) (Delivery, error) {
	id, err := firstOf(doc, v.ids, "delivery id")
	if err != nil {
		return Delivery{}, err
	}
	eventType, err := firstOf(doc, v.types, "event type")
	var absent absentError
	if err != nil && v.defaultType != "" && errors.As(err, &absent) {
		eventType, err = v.defaultType, nil
	}
	if err != nil {
		return Delivery{}, err
	}
	d := Delivery{ID: id, EventType: eventType}
	for _, f := range v.occurred {
		if d.OccurredAt = doc.time(f); !d.OccurredAt.IsZero() {
			break
		}
	}
	return d, nil
}

// firstOf returns the value of the first field present, checked with
// checkID. None present is ErrMissingHeader when the last alternative is a
// header, else ErrInvalidPayload; both name every alternative.
func firstOf(doc *document, fields []Field, what string) (string, error) {
	var names []string
	for _, f := range fields {
		val, err := doc.value(f)
		if err != nil {
			return "", err
		}
		if val != "" {
			if err := checkID(f.where(), val); err != nil {
				return "", err
			}
			return val, nil
		}
		names = append(names, f.where())
	}
	last := fields[len(fields)-1]
	if last.Header != "" && len(fields) == 1 {
		return "", fmt.Errorf("%w: %s", ErrMissingHeader, last.Header)
	}
	return "", absentError{fmt.Errorf("%w: no %s (%s is missing or empty)", ErrInvalidPayload, what, strings.Join(names, ", "))}
}

// absentError is firstOf's "none of the fields is present", as opposed to
// a present value that is refused.
type absentError struct{ error }

func (e absentError) Unwrap() error { return e.error }
