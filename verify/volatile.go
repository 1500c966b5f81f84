package verify

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Volatile returns the top-level JSON fields that provider changes from
// one attempt of a delivery to the next: Linear stamps webhookTimestamp
// into the body it signs each time it sends. Two bodies under one
// delivery id that differ only there are a retry of one event, not a
// conflict (SameEvent). Nil for providers that resend the same bytes.
func Volatile(provider string) []string {
	return presets[provider].volatile
}

// SameEvent reports whether two bodies of one delivery id are the same
// event: equal bytes, or, with volatile fields, two JSON objects whose
// other top-level fields are equal byte for byte.
func SameEvent(a, b []byte, volatile []string) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if len(volatile) == 0 {
		return false
	}
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return false
	}
	for _, k := range volatile {
		delete(ma, k)
		delete(mb, k)
	}
	if len(ma) != len(mb) {
		return false
	}
	for k, va := range ma {
		if vb, ok := mb[k]; !ok || !bytes.Equal(va, vb) {
			return false
		}
	}
	return true
}

// BodyTimestamp returns the top-level JSON field in which cfg's sender
// stamps, and signs, the time it sends a delivery (Linear's
// webhookTimestamp), with its unit (s or ms): a sender standing in for it
// must stamp the field anew for each request, or the signed time falls
// out of tolerance. Empty when the time is not a top-level JSON field.
func BodyTimestamp(cfg Config) (field, unit string) {
	scheme := cfg.HMAC
	if p, ok := presets[cfg.Provider]; ok {
		scheme = &p.scheme
	}
	if scheme == nil || scheme.Timestamp == nil || scheme.Timestamp.JSON == "" || strings.Contains(scheme.Timestamp.JSON, ".") {
		return "", ""
	}
	unit = scheme.Timestamp.Unit
	if unit == "" {
		unit = "s"
	}
	return scheme.Timestamp.JSON, unit
}
