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
	h := sha256.New()
	for _, part := range []string{source, deliveryID, handler, step} {
		// Length-prefix each part so ("ab","c") and ("a","bc") differ.
		h.Write([]byte{byte(len(part) >> 24), byte(len(part) >> 16), byte(len(part) >> 8), byte(len(part))})
		h.Write([]byte(part))
	}
	return "hkb_" + hex.EncodeToString(h.Sum(nil)[:20])
}
