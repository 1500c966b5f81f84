package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HMACScheme describes how a sender signs with an HMAC, declaratively: the
// scheme of ProviderHMAC, and of every preset (shopify, slack, …). Field
// names are the keys of a source's hmac block in hookinbox.yaml.
type HMACScheme struct {
	// SignatureHeader holds the signature(s). Required. When a sender
	// repeats the header (Mollie while a secret is rolled), every value
	// counts.
	SignatureHeader string `yaml:"signature_header"`

	// SignaturePrefix is stripped from each signature before decoding
	// ("sha256=", "v0=", "v1,"); a signature without it is skipped. Empty:
	// none.
	SignaturePrefix string `yaml:"signature_prefix"`
	// prefixOptional accepts a signature without SignaturePrefix too
	// (presets only: Mollie documents the bare hex, and its SDKs accept
	// both).
	prefixOptional bool

	// SignatureSeparator splits one header value into several signatures
	// (rotation: " " for Standard Webhooks), or, with SignaturePart, into
	// key=value items (";" in Paddle's "ts=…;h1=…"). Empty: the value is
	// one signature.
	SignatureSeparator string `yaml:"signature_separator"`

	// SignaturePart names the item holding a signature in key=value
	// headers ("h1"); every item of that name is a candidate. Empty: the
	// header is not key=value.
	SignaturePart string `yaml:"signature_part"`

	// SignedContent is the template of what is signed: {body} (exactly
	// once), {id}, {timestamp}, {url}, {method}, and literal text between
	// them. Defaults to "{body}".
	SignedContent string `yaml:"signed_content"`

	// Algorithm is sha1, sha256 or sha512. Defaults to sha256.
	Algorithm string `yaml:"algorithm"`

	// Encoding of the signature: hex, base64 or base64url (padded or not).
	// Defaults to hex.
	Encoding string `yaml:"encoding"`

	// SecretEncoding says how a secret becomes the HMAC key: raw (its
	// bytes), base64, hex, or whsec ("whsec_" and base64, Standard
	// Webhooks). Defaults to raw.
	SecretEncoding string `yaml:"secret_encoding"`

	// ID is where the delivery id is: a header, a JSON field, or
	// body_sha256 for senders that send none, which makes identical
	// bodies one delivery. Required.
	ID Field `yaml:"id"`

	// EventType is where the event type is: a header or a JSON field.
	// Required.
	EventType Field `yaml:"event_type"`

	// Timestamp, when set, is checked against the source's tolerance, past
	// and future: a header, a JSON field or a signature part, in unit s or
	// ms. Signed says the sender signs it; New refuses signed: true for a
	// header or signature part that SignedContent does not hold as
	// {timestamp}. Optional.
	Timestamp *Field `yaml:"timestamp"`

	// OccurredAt is the event's time, for ordering: a header or JSON field
	// holding RFC 3339, or unix time in Unit. Optional.
	OccurredAt *Field `yaml:"occurred_at"`
}

// Field says where a value is.
type Field struct {
	// Header names a request header.
	Header string `yaml:"header"`
	// JSON is a dotted path into the JSON body ("event.id"). A
	// form-encoded body is read as its fields, and a field holding a JSON
	// object (Slack's payload=) as that object.
	JSON string `yaml:"json"`
	// BodySHA256 (id only) uses "sha256:" and the hex SHA-256 of the body.
	BodySHA256 bool `yaml:"body_sha256"`
	// SignaturePart (timestamp only) names a key=value item of the
	// signature header ("ts").
	SignaturePart string `yaml:"signature_part"`
	// Unit of a numeric time: s or ms. Defaults to s.
	Unit string `yaml:"unit"`
	// Signed (timestamp only): the timestamp is part of the signed content.
	Signed bool `yaml:"signed"`
}

func (f Field) isZero() bool { return f == Field{} }

// where names the field's source for messages: "header X-Id", "body field
// event.id".
func (f Field) where() string {
	switch {
	case f.Header != "":
		return f.Header + " header"
	case f.JSON != "":
		return "body field " + f.JSON
	case f.SignaturePart != "":
		return "signature part " + f.SignaturePart
	}
	return "body sha256"
}

// Template placeholders.
const (
	phBody      = "body"
	phID        = "id"
	phTimestamp = "timestamp"
	phURL       = "url"
	phMethod    = "method"
)

// segment is a piece of a parsed signed_content template: literal text, or
// a placeholder.
type segment struct {
	literal     string
	placeholder string
}

// parseTemplate splits a signed_content template. Every '{' opens a known
// placeholder; {body} appears exactly once, so a scheme never signs
// something other than the body.
func parseTemplate(tmpl string) ([]segment, error) {
	var segs []segment
	bodies := 0
	for rest := tmpl; rest != ""; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			segs = append(segs, segment{literal: rest})
			break
		}
		if i > 0 {
			segs = append(segs, segment{literal: rest[:i]})
		}
		if rest[i] == '}' {
			return nil, fmt.Errorf("%q has a '}' that closes nothing", tmpl)
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%q has a '{' that is not closed", tmpl)
		}
		name := rest[i+1 : i+end]
		switch name {
		case phBody:
			bodies++
		case phID, phTimestamp, phURL, phMethod:
		default:
			return nil, fmt.Errorf("unknown placeholder {%s} (want {body}, {id}, {timestamp}, {url} or {method})", name)
		}
		segs = append(segs, segment{placeholder: name})
		rest = rest[i+end+1:]
	}
	if bodies != 1 {
		return nil, fmt.Errorf("%q must hold {body} exactly once", tmpl)
	}
	return segs, nil
}

func (s HMACScheme) signs(placeholder string) bool {
	segs, _ := parseTemplate(s.SignedContent)
	for _, seg := range segs {
		if seg.placeholder == placeholder {
			return true
		}
	}
	return false
}

// withDefaults fills the scheme's documented defaults.
func (s HMACScheme) withDefaults() HMACScheme {
	if s.SignedContent == "" {
		s.SignedContent = "{" + phBody + "}"
	}
	if s.Algorithm == "" {
		s.Algorithm = "sha256"
	}
	if s.Encoding == "" {
		s.Encoding = "hex"
	}
	if s.SecretEncoding == "" {
		s.SecretEncoding = "raw"
	}
	return s
}

var hashes = map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}

// validate checks a defaulted scheme. Errors are *ConfigError naming the
// key under the source ("hmac.algorithm"); notificationURL is the source's.
func (s HMACScheme) validate(notificationURL string) error {
	if strings.TrimSpace(s.SignatureHeader) == "" {
		return configErr("hmac.signature_header", "required")
	}
	segs, err := parseTemplate(s.SignedContent)
	if err != nil {
		return configErr("hmac.signed_content", "%v", err)
	}
	if _, ok := hashes[s.Algorithm]; !ok {
		return configErr("hmac.algorithm", "%q (want sha1, sha256 or sha512)", s.Algorithm)
	}
	if _, ok := signatureEncodings[s.Encoding]; !ok {
		return configErr("hmac.encoding", "%q (want hex, base64 or base64url)", s.Encoding)
	}
	if _, ok := secretEncodings[s.SecretEncoding]; !ok {
		return configErr("hmac.secret_encoding", "%q (want raw, base64, hex or whsec)", s.SecretEncoding)
	}
	if s.SignaturePart != "" && s.SignatureSeparator == "" {
		return configErr("hmac.signature_separator", "required with signature_part: it separates the key=value items")
	}
	if err := s.ID.check("hmac.id", true, false); err != nil {
		return err
	}
	if s.EventType.BodySHA256 {
		return configErr("hmac.event_type", "body_sha256 is for ids")
	}
	if err := s.EventType.check("hmac.event_type", true, false); err != nil {
		return err
	}
	if s.Timestamp != nil {
		if err := s.Timestamp.check("hmac.timestamp", true, true); err != nil {
			return err
		}
		if s.Timestamp.SignaturePart != "" && s.SignaturePart == "" {
			return configErr("hmac.timestamp.signature_part", "needs hmac.signature_part: the signature header is not key=value")
		}
		signedInTemplate := s.Timestamp.JSON != "" || s.signs(phTimestamp)
		if s.Timestamp.Signed && !signedInTemplate {
			return configErr("hmac.timestamp.signed", "the timestamp is in %s, which signed_content does not hold; add {timestamp}", s.Timestamp.where())
		}
	}
	if s.OccurredAt != nil {
		if s.OccurredAt.SignaturePart != "" || s.OccurredAt.BodySHA256 || s.OccurredAt.Signed {
			return configErr("hmac.occurred_at", "takes header or json, and unit")
		}
		if err := s.OccurredAt.check("hmac.occurred_at", true, true); err != nil {
			return err
		}
	}
	for _, seg := range segs {
		switch seg.placeholder {
		case phID:
			if s.ID.Header == "" {
				return configErr("hmac.signed_content", "{id} needs the id in a header (hmac.id.header)")
			}
		case phTimestamp:
			if s.Timestamp == nil || (s.Timestamp.Header == "" && s.Timestamp.SignaturePart == "") {
				return configErr("hmac.signed_content", "{timestamp} needs hmac.timestamp in a header or a signature part")
			}
		case phURL:
			if notificationURL == "" {
				return configErr("notification_url", "required: hmac.signed_content signs {url}")
			}
		}
	}
	return nil
}

// check validates one Field: exactly one source, and a unit only where a
// time is read.
func (f Field) check(key string, required, isTime bool) error {
	n := 0
	for _, set := range []bool{f.Header != "", f.JSON != "", f.BodySHA256, f.SignaturePart != ""} {
		if set {
			n++
		}
	}
	switch {
	case n == 0 && required:
		return configErr(key, "required: set header, json or body_sha256")
	case n > 1:
		return configErr(key, "set one of header, json, body_sha256 and signature_part")
	case f.SignaturePart != "" && !isTime:
		return configErr(key+".signature_part", "only a timestamp is read from a signature part")
	case f.Unit != "" && !isTime:
		return configErr(key+".unit", "only times have a unit")
	case f.Unit != "" && f.Unit != "s" && f.Unit != "ms":
		return configErr(key+".unit", "%q (want s or ms)", f.Unit)
	case f.Signed && !isTime:
		return configErr(key+".signed", "only a timestamp is signed")
	case f.JSON != "" && strings.Contains("."+f.JSON+".", ".."):
		return configErr(key+".json", "%q is not a dotted path", f.JSON)
	}
	return nil
}

// signatureEncodings decode a received signature. base64url takes padded
// and unpadded forms: senders differ, and the length check that follows
// refuses truncations either way.
var signatureEncodings = map[string]struct {
	decode func(string) ([]byte, error)
	encode func([]byte) string
}{
	"hex":       {hex.DecodeString, hex.EncodeToString},
	"base64":    {base64.StdEncoding.DecodeString, base64.StdEncoding.EncodeToString},
	"base64url": {decodeBase64URL, base64.RawURLEncoding.EncodeToString},
}

func decodeBase64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// secretEncodings turn a configured secret into an HMAC key.
var secretEncodings = map[string]func(string) ([]byte, error){
	"raw":    func(s string) ([]byte, error) { return []byte(s), nil },
	"base64": base64.StdEncoding.DecodeString,
	"hex":    hex.DecodeString,
	"whsec":  standardKey,
}

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

// headerValues returns every value of the named header, looked up like
// headerValue.
func headerValues(h http.Header, name string) []string {
	if vs := h.Values(name); len(vs) > 0 {
		return nonEmpty(vs)
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			return nonEmpty(vs)
		}
	}
	return nil
}

func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// errNotForm is a form body whose fields cannot be parsed.
var errNotForm = errors.New("body is neither a JSON object nor form-encoded fields")

// parseForm reads a form-encoded body. A field whose value is a JSON
// object (Slack's payload=) is read as that object, so a path can reach
// into it.
func parseForm(body []byte) (map[string]any, error) {
	vals, err := url.ParseQuery(string(body))
	if err != nil || len(vals) == 0 {
		return nil, errNotForm
	}
	m := make(map[string]any, len(vals))
	for k, vs := range vals {
		v := vs[0]
		if t := trimJSONSpace([]byte(v)); len(t) > 0 && t[0] == '{' {
			if obj, err := decodeJSON(t); err == nil {
				m[k] = obj
				continue
			}
		}
		m[k] = v
	}
	return m, nil
}
