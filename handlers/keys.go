package handlers

import (
	"crypto/sha256"
	"encoding/hex"
)

// DeriveKey returns the downstream idempotency key for one step of one
// handler on one delivery. It is a pure function of its inputs: the same on
// every retry and every replay, different for every other delivery, handler
// or step, never random and never time-based. That is what lets a
// downstream API recognise a repeated call as the same request.
//
// The inputs are hashed, not concatenated, so keys have a fixed length (fit
// every API's limit, e.g. Stripe's 255) and reveal nothing of the delivery.
func DeriveKey(source, deliveryID, handler, step string) string {
	return hashKey(nil, source, deliveryID, handler, step)
}

// DeriveIntentKey returns the downstream idempotency key for one step of
// one handler on one business intent, named by naturalKey (a release's
// repository and tag, an invoice's id). It leaves the delivery out: every
// delivery that describes the same intent, such as a provider's resend
// with a new delivery id, gets the same key. It never equals a DeriveKey
// key, and parts never run together: ("a", "bc") and ("ab", "c") differ.
func DeriveIntentKey(source, handler, step string, naturalKey ...string) string {
	return hashKey(intentDomain, append([]string{source, handler, step}, naturalKey...)...)
}

// intentDomain starts an intent key's hashed input. It reads as a part
// length of 4 GiB, which no DeriveKey part has, so the two kinds of key
// never hash the same input.
var intentDomain = []byte{0xff, 0xff, 0xff, 0xff}

func hashKey(domain []byte, parts ...string) string {
	h := sha256.New()
	h.Write(domain)
	for _, part := range parts {
		// Length-prefix each part so ("ab","c") and ("a","bc") differ.
		h.Write([]byte{byte(len(part) >> 24), byte(len(part) >> 16), byte(len(part) >> 8), byte(len(part))})
		h.Write([]byte(part))
	}
	return "hkb_" + hex.EncodeToString(h.Sum(nil)[:20])
}
