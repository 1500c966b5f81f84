package verify

import "strings"

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
