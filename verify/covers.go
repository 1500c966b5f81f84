package verify

import "strings"

// Covered says what a provider's signature covers besides the body: the
// delivery id and a timestamp.
type Covered struct {
	// ID: the delivery id is signed, or is read from the signed body.
	ID bool
	// Timestamp: a signed timestamp bounds a replay to the tolerance.
	Timestamp bool
}

// ReplayableUnderNewID reports whether a captured request can be sent
// again under a fresh delivery id that the signature does not cover: as
// long as anyone likes, or, with a signed time, within the tolerance. Only
// the body's content can tell it from the original.
func (c Covered) ReplayableUnderNewID() bool { return !c.ID }

// DedupContent is what body dedup compares for provider when its
// signature covers something else than the body's bytes, nil when it
// covers the bytes. Twilio signs its form's parameters sorted, not the
// bytes sent, so a reordered or re-encoded body verifies with the same
// signature and must dedupe alike.
func DedupContent(provider string, body []byte) []byte {
	if provider == ProviderTwilio {
		if params, err := sortedParams(body); err == nil {
			return []byte(params)
		}
	}
	return nil
}

// coveredOf are the providers that are not presets (a preset's scheme
// says it itself).
var coveredOf = map[string]Covered{
	// X-GitHub-Delivery is not signed, and nothing signed says when.
	ProviderGitHub: {},
	// The event's id is in the body; the timestamp is signed.
	ProviderStripe:   {ID: true, Timestamp: true},
	ProviderStandard: {ID: true, Timestamp: true},
	// The secret token signs nothing at all (the signing token would
	// cover both, but a source may accept either).
	ProviderGitLab: {},
	// Interactions carry their id in the signed body, with a signed
	// timestamp.
	ProviderDiscord: {ID: true, Timestamp: true},
	// The id is the signed token, signed with a timestamp.
	ProviderMailgun: {ID: true, Timestamp: true},
	// I-Twilio-Idempotency-Token is not signed; neither is a time.
	ProviderTwilio: {},
	// PayPal signs the transmission id and time with its certificate.
	ProviderPayPal: {ID: true, Timestamp: true},
}

// SignatureCovers returns what provider's signature covers. hmac is the
// scheme of an "hmac" source (nil for other providers).
func SignatureCovers(provider string, hmac *HMACScheme) Covered {
	if c, ok := coveredOf[provider]; ok {
		return c
	}
	if provider == ProviderHMAC {
		if hmac == nil {
			return Covered{}
		}
		return hmac.covered([]Field{hmac.ID})
	}
	if p, ok := presets[provider]; ok {
		p = p.normalized()
		return p.scheme.covered(p.ids)
	}
	return Covered{}
}

// covered: every id alternative is in the signed content, and a
// timestamp is signed.
func (s HMACScheme) covered(ids []Field) Covered {
	signed := s.SignedContent
	if signed == "" {
		signed = "{body}"
	}
	c := Covered{ID: true, Timestamp: s.Timestamp != nil && s.Timestamp.Signed}
	for _, id := range ids {
		inBody := (id.JSON != "" || id.BodySHA256) && strings.Contains(signed, "{body}")
		if !inBody && !(id.Header != "" && strings.Contains(signed, "{id}")) {
			c.ID = false
		}
	}
	return c
}
