package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (https://www.standardwebhooks.com, Svix's scheme) header
// names are lowercase in the spec; http.Header canonicalizes on lookup.
const (
	standardIDHeader        = "webhook-id"
	standardTimestampHeader = "webhook-timestamp"
	standardSignatureHeader = "webhook-signature"
	standardSecretPrefix    = "whsec_"
)

type standardVerifier struct {
	keys      [][]byte
	tolerance time.Duration
	now       func() time.Time
}

func newStandardVerifier(cfg Config) (Verifier, error) {
	v := &standardVerifier{tolerance: cfg.Tolerance, now: cfg.Now}
	for i, s := range cfg.Secrets {
		key, err := standardKey(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d of %d: %w", i+1, len(cfg.Secrets), err)
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

// standardKey decodes "whsec_<base64>" (or bare base64) to the HMAC key:
// unlike Stripe, the key is the decoded bytes, not the secret text. The
// secret itself never appears in the error.
func standardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, standardSecretPrefix))
	if err != nil {
		return nil, errors.New("standard webhooks secret is not valid base64 (want whsec_<base64>)")
	}
	if len(key) == 0 {
		return nil, errors.New("standard webhooks secret decodes to an empty key")
	}
	return key, nil
}

func (v *standardVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	vals, err := requiredHeaders(header, standardIDHeader, standardTimestampHeader, standardSignatureHeader)
	if err != nil {
		return Delivery{}, err
	}
	id, rawTS, rawSig := vals[0], vals[1], vals[2]

	// The timestamp is part of the signed content, so a malformed one is a
	// malformed signature.
	ts, ok := parseUnixSeconds(rawTS)
	if !ok {
		return Delivery{}, fmt.Errorf("%w: %s must be unix seconds", ErrInvalidSignature, standardTimestampHeader)
	}
	sigs := parseStandardSignature(rawSig)
	if len(sigs) == 0 {
		return Delivery{}, fmt.Errorf("%w: %s has no v1,<base64 HMAC-SHA256> entry (other versions are not accepted)",
			ErrInvalidSignature, standardSignatureHeader)
	}
	expected := make([][]byte, len(v.keys))
	for i, key := range v.keys {
		expected[i] = standardMAC(key, id, ts, body)
	}
	if !anyEqual(expected, sigs) {
		return Delivery{}, fmt.Errorf("%w: no configured secret matches any v1 signature in %s; check the endpoint's signing secret",
			ErrInvalidSignature, standardSignatureHeader)
	}
	if err := checkTolerance(standardTimestampHeader, ts, v.now(), v.tolerance); err != nil {
		return Delivery{}, err
	}

	if err := checkID(standardIDHeader+" header", id); err != nil {
		return Delivery{}, err
	}
	var payload struct {
		Type      json.RawMessage `json:"type"`
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := decodeObject(body, &payload); err != nil {
		return Delivery{}, err
	}
	eventType, err := stringField(payload.Type, "type")
	if err != nil {
		return Delivery{}, err
	}
	return Delivery{ID: id, EventType: eventType, OccurredAt: rfc3339Field(payload.Timestamp)}, nil
}

// rfc3339Field reads the spec's optional payload timestamp. Anything that
// is not an RFC 3339 string reads as zero: the spec only recommends the
// field, and the event is already verified.
func rfc3339Field(raw json.RawMessage) time.Time {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// standardMAC signs "<id>.<timestamp>.<body>" as the spec does.
func standardMAC(key []byte, id string, ts int64, body []byte) []byte {
	return signHMAC(key, []byte(id), []byte("."), []byte(strconv.FormatInt(ts, 10)), []byte("."), body)
}

// parseStandardSignature returns the decoded v1 signatures from a
// space-separated list of "<version>,<base64>" entries. Other versions
// (v1a is asymmetric ed25519) and undecodable entries are skipped: a sender
// may list several while rotating secrets or schemes.
func parseStandardSignature(header string) [][]byte {
	var sigs [][]byte
	for entry := range strings.FieldsSeq(header) {
		version, b64, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sig) != sha256.Size {
			continue
		}
		sigs = append(sigs, sig)
	}
	return sigs
}

type standardSigner struct {
	key []byte
}

func newStandardSigner(cfg Config) (Signer, error) {
	key, err := standardKey(cfg.Secrets[0])
	if err != nil {
		return nil, err
	}
	return &standardSigner{key: key}, nil
}

// Sign ignores msg.EventType: the spec puts the type in the body.
func (s *standardSigner) Sign(body []byte, msg Message, now time.Time) (http.Header, error) {
	if msg.ID == "" {
		return nil, errors.New("standard: Message.ID is required (sent as webhook-id)")
	}
	ts, err := signTime(now)
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	h := http.Header{}
	h.Set(standardIDHeader, msg.ID)
	h.Set(standardTimestampHeader, strconv.FormatInt(ts, 10))
	h.Set(standardSignatureHeader, "v1,"+base64.StdEncoding.EncodeToString(standardMAC(s.key, msg.ID, ts, body)))
	h.Set("Content-Type", "application/json")
	return h, nil
}
