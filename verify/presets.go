package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
)

// preset is a sender that the declarative scheme describes: a few lines of
// data. Where a sender puts a value in one of several places (Slack's event
// type), the alternatives are listed, the first present wins.
type preset struct {
	scheme    HMACScheme
	ids       []Field // defaults to scheme.ID
	types     []Field // defaults to scheme.EventType
	occurred  []Field // defaults to scheme.OccurredAt
	handshake func(doc *document, key []byte) (*Reply, error)
	// Resource is the default resource_field: the dotted JSON path of what
	// an event is about, for ordering. Empty: the payload names none.
	Resource string
	// volatile are the top-level JSON fields the sender changes from one
	// attempt of a delivery to the next (Volatile).
	volatile []string
	// secretHeaders carry a secret as it is, not a signature made with it
	// (SecretHeaders).
	secretHeaders []string
}

// Svix signs Standard Webhooks under its own header names; Clerk and Resend
// send through Svix.
func svixScheme() HMACScheme {
	return HMACScheme{
		SignatureHeader: "svix-signature", SignaturePrefix: "v1,", SignatureSeparator: " ",
		SignedContent: "{id}.{timestamp}.{body}", Encoding: "base64", SecretEncoding: "whsec",
		ID: Field{Header: "svix-id"}, EventType: Field{JSON: "type"},
		Timestamp: &Field{Header: "svix-timestamp", Signed: true},
	}
}

// presets are the senders hookinbox knows by name; docs/providers.md
// documents each row. Sources: each provider's signature documentation, cited in
// presets_test.go next to its vector.
var presets = map[string]preset{
	"shopify": {
		scheme: HMACScheme{SignatureHeader: "X-Shopify-Hmac-Sha256", Encoding: "base64",
			ID: Field{Header: "X-Shopify-Webhook-Id"}, EventType: Field{Header: "X-Shopify-Topic"}},
		occurred: []Field{{JSON: "updated_at"}, {Header: "X-Shopify-Triggered-At"}},
		Resource: "admin_graphql_api_id",
	},
	"slack": {
		scheme: HMACScheme{SignatureHeader: "X-Slack-Signature", SignaturePrefix: "v0=", SignedContent: "v0:{timestamp}:{body}",
			Timestamp: &Field{Header: "X-Slack-Request-Timestamp", Signed: true}},
		// Events API carries event_id; slash commands and interactivity
		// (form posts) carry none and are deduplicated on the body.
		ids:       []Field{{JSON: "event_id"}, {BodySHA256: true}},
		types:     []Field{{JSON: "event.type"}, {JSON: "payload.type"}, {JSON: "command"}, {JSON: "type"}},
		occurred:  []Field{{JSON: "event_time"}},
		handshake: slackURLVerification,
	},
	"paddle": {
		scheme: HMACScheme{SignatureHeader: "Paddle-Signature", SignatureSeparator: ";", SignaturePart: "h1",
			SignedContent: "{timestamp}:{body}", Timestamp: &Field{SignaturePart: "ts", Signed: true},
			ID: Field{JSON: "event_id"}, EventType: Field{JSON: "event_type"}, OccurredAt: &Field{JSON: "occurred_at"}},
		Resource: "data.id",
	},
	"square": {
		scheme: HMACScheme{SignatureHeader: "X-Square-Hmacsha256-Signature", Encoding: "base64", SignedContent: "{url}{body}",
			ID: Field{JSON: "event_id"}, EventType: Field{JSON: "type"}, OccurredAt: &Field{JSON: "created_at"}},
		Resource: "data.id",
	},
	"razorpay": {
		scheme: HMACScheme{SignatureHeader: "X-Razorpay-Signature",
			ID: Field{Header: "X-Razorpay-Event-Id"}, EventType: Field{JSON: "event"}, OccurredAt: &Field{JSON: "created_at"}},
		Resource: "payload.payment.entity.id",
	},
	"lemonsqueezy": {
		scheme: HMACScheme{SignatureHeader: "X-Signature", ID: Field{BodySHA256: true}},
		types:  []Field{{Header: "X-Event-Name"}, {JSON: "meta.event_name"}},
		// An update's time, else a creation's.
		occurred: []Field{{JSON: "data.attributes.updated_at"}, {JSON: "data.attributes.created_at"}},
		Resource: "data.id",
	},
	"checkout": {
		scheme: HMACScheme{SignatureHeader: "Cko-Signature",
			ID: Field{JSON: "id"}, EventType: Field{JSON: "type"}, OccurredAt: &Field{JSON: "created_on"}},
		Resource: "data.id",
	},
	"mollie": {
		scheme: HMACScheme{SignatureHeader: "X-Mollie-Signature", SignaturePrefix: "sha256=", prefixOptional: true,
			ID: Field{JSON: "id"}, EventType: Field{JSON: "type"}, OccurredAt: &Field{JSON: "createdAt"}},
		Resource: "entityId",
	},
	"bitbucket": {
		scheme: HMACScheme{SignatureHeader: "X-Hub-Signature", SignaturePrefix: "sha256=",
			ID: Field{Header: "X-Request-UUID"}, EventType: Field{Header: "X-Event-Key"}, OccurredAt: &Field{JSON: "pullrequest.updated_on"}},
	},
	"intercom": {
		scheme: HMACScheme{SignatureHeader: "X-Hub-Signature", SignaturePrefix: "sha1=", Algorithm: "sha1",
			ID: Field{JSON: "id"}, EventType: Field{JSON: "topic"}, OccurredAt: &Field{JSON: "created_at"}},
		Resource: "data.item.id",
	},
	"linear": {
		scheme: HMACScheme{SignatureHeader: "Linear-Signature",
			ID: Field{Header: "Linear-Delivery"}, EventType: Field{JSON: "type"},
			Timestamp: &Field{JSON: "webhookTimestamp", Unit: "ms", Signed: true}, OccurredAt: &Field{JSON: "data.updatedAt"}},
		Resource: "data.id",
		// Stamped when each attempt is sent (and signed with the body).
		volatile: []string{"webhookTimestamp"},
	},
	"zoom": {
		scheme: HMACScheme{SignatureHeader: "X-Zm-Signature", SignaturePrefix: "v0=", SignedContent: "v0:{timestamp}:{body}",
			Timestamp: &Field{Header: "X-Zm-Request-Timestamp", Signed: true},
			ID:        Field{BodySHA256: true}, EventType: Field{JSON: "event"}, OccurredAt: &Field{JSON: "event_ts", Unit: "ms"}},
		handshake: zoomURLValidation,
		Resource:  "payload.object.id",
	},
	"svix":   {scheme: svixScheme(), Resource: "data.id"},
	"clerk":  {scheme: svixScheme(), occurred: []Field{{JSON: "timestamp", Unit: "ms"}}, Resource: "data.id"},
	"resend": {scheme: svixScheme(), occurred: []Field{{JSON: "created_at"}}, Resource: "data.email_id"},
}

// PresetResource is the default resource_field of a preset provider, ""
// for none (and for providers that are not presets).
func PresetResource(provider string) string {
	switch provider {
	case ProviderGitLab:
		return gitLabFields.Resource
	case ProviderMailgun:
		return mailgunFields.Resource
	case ProviderPayPal:
		return "resource.id"
	}
	return presets[provider].Resource
}

// SecretHeaders are the request headers in which provider's sender puts a
// secret as it is (GitLab's X-Gitlab-Token, compared by equality) rather
// than a signature made with it. Whoever reads a stored request could
// send as the provider with them, so they must not be stored. Nil for
// providers that only sign.
func SecretHeaders(provider string) []string {
	if provider == ProviderGitLab {
		return gitLabFields.secretHeaders
	}
	return presets[provider].secretHeaders
}

// normalized fills the scheme's id, type and time from the alternatives,
// so validation sees the first of each.
func (p preset) normalized() preset {
	if len(p.ids) == 0 {
		p.ids = []Field{p.scheme.ID}
	}
	if len(p.types) == 0 {
		p.types = []Field{p.scheme.EventType}
	}
	if len(p.occurred) == 0 && p.scheme.OccurredAt != nil {
		p.occurred = []Field{*p.scheme.OccurredAt}
	}
	p.scheme.ID, p.scheme.EventType = p.ids[0], p.types[0]
	return p
}

func buildPresetVerifier(name string, cfg Config) (*hmacVerifier, error) {
	p := presets[name].normalized()
	v, err := buildHMACVerifier(cfg, p.scheme)
	if err != nil {
		return nil, err
	}
	v.ids, v.types, v.occurred, v.handshake = p.ids, p.types, p.occurred, p.handshake
	return v, nil
}

func newPresetVerifier(name string) func(Config) (Verifier, error) {
	return func(cfg Config) (Verifier, error) { return buildPresetVerifier(name, cfg) }
}

func newPresetSigner(name string) func(Config) (Signer, error) {
	return func(cfg Config) (Signer, error) {
		v, err := buildPresetVerifier(name, cfg)
		if err != nil {
			return nil, err
		}
		return &hmacSigner{v: v}, nil
	}
}

// slackURLVerification answers the challenge Slack sends when an Events
// API URL is saved: the challenge back, and no event.
func slackURLVerification(doc *document, _ []byte) (*Reply, error) {
	typ, err := doc.lookup("type")
	if err != nil || typ != "url_verification" {
		return nil, nil // a form (slash command, interactivity), or a body the extractors refuse
	}
	challenge, err := doc.value(Field{JSON: "challenge"})
	if err != nil || challenge == "" {
		return nil, fmt.Errorf("%w: url_verification without a challenge", ErrInvalidPayload)
	}
	return jsonReply(map[string]string{"challenge": challenge}), nil
}

// zoomURLValidation answers Zoom's endpoint.url_validation: the plain token
// and its HMAC-SHA256 under the secret token, hex.
func zoomURLValidation(doc *document, key []byte) (*Reply, error) {
	event, err := doc.lookup("event")
	if err != nil || event != "endpoint.url_validation" {
		return nil, nil // an event, or a body the extractors refuse
	}
	plain, err := doc.value(Field{JSON: "payload.plainToken"})
	if err != nil || plain == "" {
		return nil, fmt.Errorf("%w: endpoint.url_validation without payload.plainToken", ErrInvalidPayload)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(plain))
	return jsonReply(map[string]string{"plainToken": plain, "encryptedToken": hex.EncodeToString(mac.Sum(nil))}), nil
}

func jsonReply(v any) *Reply {
	body, _ := json.Marshal(v) // maps of strings always marshal
	return &Reply{Status: http.StatusOK, ContentType: "application/json", Body: body}
}
