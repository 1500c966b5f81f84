package verify

import "strings"

// Covered says what a provider's signature covers besides the body: the
// delivery id, the event type and a timestamp.
type Covered struct {
	// ID: the delivery id is signed, or is read from the signed body.
	ID bool
	// EventType: the event type is signed, or is read from the signed
	// body. An unsigned type (a header) is whatever the sender of a
	// request says, a replayer of a captured one included.
	EventType bool
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
	// X-GitHub-Delivery and X-GitHub-Event are not signed, and nothing
	// signed says when.
	ProviderGitHub: {},
	// The event's id and type are in the body; the timestamp is signed.
	ProviderStripe:   {ID: true, EventType: true, Timestamp: true},
	ProviderStandard: {ID: true, EventType: true, Timestamp: true},
	// The secret token signs nothing at all (the signing token would
	// cover the id and time, but a source may accept either), and
	// X-Gitlab-Event is a header in both modes.
	ProviderGitLab: {},
	// Interactions carry their id and type in the signed body, with a
	// signed timestamp.
	ProviderDiscord: {ID: true, EventType: true, Timestamp: true},
	// The id is the signed token, signed with a timestamp; the event is
	// in the signed body.
	ProviderMailgun: {ID: true, EventType: true, Timestamp: true},
	// I-Twilio-Idempotency-Token is not signed; neither is a time. The
	// type is one of the signed parameters (or "webhook" for none).
	ProviderTwilio: {EventType: true},
	// PayPal signs the transmission id and time with its certificate,
	// and the body's digest, which holds event_type.
	ProviderPayPal: {ID: true, EventType: true, Timestamp: true},
}

// oneBodyManyTypes are the senders that send one body as distinct events
// under several unsigned event types, so that leaving the type out of
// body dedup would take a legitimate second event for a replay (see
// DedupBodyByType). Shopify can send an order's identical body as
// orders/create and orders/updated; Bitbucket's bodies do not name their
// event, and an event and its undoing (pullrequest:approved and
// pullrequest:unapproved) carry the same kinds of objects, so an
// identical body under two event keys cannot be ruled out.
var oneBodyManyTypes = map[string]bool{
	"shopify":   true,
	"bitbucket": true,
}

// DedupBodyByType reports whether body dedup tells bodies apart by their
// event type: where the type is covered by the signature (the same body
// always comes with the same type, so it changes nothing), and for the
// senders that send one body under several unsigned types, at the cost
// that a captured body replays once under each type name a replayer
// makes up. Elsewhere the type is whatever a replayer says, and the same
// signed body is the same event whatever type it claims.
func DedupBodyByType(provider string, hmac *HMACScheme) bool {
	return oneBodyManyTypes[provider] || SignatureCovers(provider, hmac).EventType
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
		return hmac.covered([]Field{hmac.ID}, []Field{hmac.EventType})
	}
	if p, ok := presets[provider]; ok {
		p = p.normalized()
		return p.scheme.covered(p.ids, p.types)
	}
	return Covered{}
}

// covered: every id alternative is in the signed content, every type
// alternative in the signed body (no template signs a header's type),
// and a timestamp is signed.
func (s HMACScheme) covered(ids, types []Field) Covered {
	signed := s.SignedContent
	if signed == "" {
		signed = "{body}"
	}
	bodySigned := strings.Contains(signed, "{body}")
	c := Covered{ID: true, EventType: bodySigned, Timestamp: s.Timestamp != nil && s.Timestamp.Signed}
	for _, id := range ids {
		inBody := (id.JSON != "" || id.BodySHA256) && bodySigned
		if !inBody && !(id.Header != "" && strings.Contains(signed, "{id}")) {
			c.ID = false
		}
	}
	for _, typ := range types {
		if typ.JSON == "" {
			c.EventType = false
		}
	}
	return c
}
