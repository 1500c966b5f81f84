// Package verify checks webhook signatures the way each provider signs them
// and extracts what a verified request says about itself (delivery id, event
// type, time). It takes bytes and header values and returns typed errors; it
// knows nothing about HTTP frameworks, storage or queues.
package verify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Provider names accepted by Config.Provider and NewSigner. The presets
// (shopify, slack, …) are listed by Providers.
const (
	ProviderGitHub   = "github"
	ProviderStripe   = "stripe"
	ProviderStandard = "standard"
	// ProviderHMAC is the declarative scheme that Config.HMAC describes.
	ProviderHMAC = "hmac"
)

// DefaultTolerance is the max age (either direction) of a signed timestamp
// when Config.Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// MaxIDLength bounds delivery ids and event types (bytes).
const MaxIDLength = 255

// Every error returned by Verifier.Verify matches exactly one of
// ErrMissingHeader, ErrInvalidPayload, ErrInvalidSignature,
// ErrTimestampOutOfTolerance and ErrUnavailable. Their messages go back to the webhook sender,
// so they explain what is wrong but never include a secret or the signature
// we expected.
var (
	// ErrUnknownProvider is returned by New and NewSigner for a provider
	// name they do not know.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrNoSecrets is returned by New when Config.Secrets holds no
	// non-empty secret, and by NewSigner for an empty secret.
	ErrNoSecrets = errors.New("no secrets configured")
	// ErrMissingHeader is wrapped with the name of the absent header.
	ErrMissingHeader = errors.New("missing header")
	// ErrInvalidPayload is wrapped with a human reason.
	ErrInvalidPayload = errors.New("invalid payload")
	// ErrInvalidSignature covers malformed signature headers as well as
	// signatures that no configured secret produces.
	ErrInvalidSignature = errors.New("invalid signature")
	// ErrTimestampOutOfTolerance means the signature is genuine but its
	// timestamp is too far from now: a replay, or a badly skewed clock.
	ErrTimestampOutOfTolerance = errors.New("timestamp out of tolerance")
	// ErrUnavailable means the request could not be verified for a reason
	// that is not the sender's: a provider's verification API did not
	// answer. The sender should retry later; it is never a 4xx.
	ErrUnavailable = errors.New("verification unavailable")
)

// ConfigError is a Config problem that names the configuration key at
// fault, as hookinbox.yaml spells it under a source ("hmac.algorithm",
// "notification_url"). Its text never holds a secret.
type ConfigError struct {
	Key string
	Msg string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Msg }

func configErr(key, format string, args ...any) error {
	return &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Config configures a Verifier.
type Config struct {
	// Provider selects the signature scheme: ProviderGitHub,
	// ProviderStripe or ProviderStandard. Required.
	Provider string

	// Secrets are the provider's signing secrets. A request is accepted if
	// any one of them produced its signature, so a secret can be rotated by
	// listing the new one next to the old one until the provider has
	// switched. Empty strings are ignored; at least one non-empty secret is
	// required.
	//
	// Stripe secrets are used as-is, "whsec_" prefix included. Standard
	// Webhooks secrets are "whsec_<base64>" (or bare base64) and New
	// rejects one that does not decode.
	Secrets []string

	// Tolerance is how far a signed timestamp may be from Now, in either
	// direction, before the request is refused as a possible replay. Used
	// by every provider that signs a time (GitHub, Shopify and others sign
	// none). Negative is invalid. Defaults to DefaultTolerance.
	Tolerance time.Duration

	// Now returns the current time for tolerance checks. Defaults to
	// time.Now; tests inject a fixed clock.
	Now func() time.Time

	// HMAC describes the scheme of ProviderHMAC. Required for it, refused
	// for every other provider.
	HMAC *HMACScheme

	// NotificationURL is the URL the sender was told to call, exactly as
	// it signs it: {url} in an HMAC scheme, square, twilio. Behind a proxy
	// the URL hookinbox sees differs, so it is configured, not derived.
	NotificationURL string

	// PayPal configures ProviderPayPal's verification API. Required for
	// it, refused for every other provider.
	PayPal *PayPalConfig

	// HTTPClient makes the calls of providers that verify through an API
	// (paypal). Defaults to a client with a 10s timeout.
	HTTPClient *http.Client
}

// withDefaults returns a copy of c with zero values replaced by defaults and
// empty secrets dropped. The copy does not share Secrets with the caller, so
// a caller reusing its slice cannot change a running Verifier.
func (c Config) withDefaults() Config {
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	secrets := make([]string, 0, len(c.Secrets))
	for _, s := range c.Secrets {
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	c.Secrets = secrets
	return c
}

// validate checks a Config that has been through withDefaults.
func (c Config) validate() error {
	p, ok := providers[c.Provider]
	if !ok {
		return unknownProvider(c.Provider)
	}
	if len(c.Secrets) == 0 && !p.noSecrets {
		return fmt.Errorf("%w for provider %s", ErrNoSecrets, c.Provider)
	}
	if c.HMAC != nil && c.Provider != ProviderHMAC {
		return configErr("hmac", "only hmac sources take an hmac block (provider is %s)", c.Provider)
	}
	if c.PayPal != nil && c.Provider != ProviderPayPal {
		return configErr("paypal", "only paypal sources take a paypal block (provider is %s)", c.Provider)
	}

	if c.Tolerance < 0 {
		return fmt.Errorf("tolerance must not be negative, got %s", c.Tolerance)
	}
	return nil
}

// Delivery is what a verified request says about itself.
type Delivery struct {
	// ID is the provider's delivery id: unique per delivery and repeated
	// when the provider retries it, which makes it the deduplication key.
	ID string
	// EventType is the provider's name for the event, e.g. "push" or
	// "invoice.paid".
	EventType string
	// OccurredAt is when the provider says the event happened, in UTC. Zero
	// when the provider does not say.
	OccurredAt time.Time
	// Reply, when set, marks a verified handshake (Slack's
	// url_verification, Zoom's endpoint.url_validation, Discord's PING):
	// not an event. The sender needs exactly this answer, and nothing is
	// stored. ID and EventType are empty then.
	Reply *Reply
}

// Reply is the answer a handshake needs.
type Reply struct {
	// Status is 200, or 204 with no Body.
	Status int
	// ContentType of Body, e.g. "application/json".
	ContentType string
	Body        []byte
}

// Request is what a RequestVerifier reads of an HTTP request.
type Request struct {
	// Body is the raw body, byte for byte.
	Body []byte
	// Header holds the request's headers.
	Header http.Header
	// RawQuery is the query string as received, without '?': twilio
	// signs the URL it called, query included.
	RawQuery string
}

// RequestVerifier is implemented by verifiers that need more than the body
// and headers: a context for a provider's API (paypal), or the query
// string (twilio). Their Verify uses context.Background and no query.
type RequestVerifier interface {
	VerifyRequest(ctx context.Context, r Request) (Delivery, error)
}

// VerifyRequest verifies r with v, through VerifyRequest when v implements
// RequestVerifier.
func VerifyRequest(ctx context.Context, v Verifier, r Request) (Delivery, error) {
	if rv, ok := v.(RequestVerifier); ok {
		return rv.VerifyRequest(ctx, r)
	}
	return v.Verify(r.Body, r.Header)
}

// Verifier checks one provider's webhook requests. Implementations are
// immutable after New and safe for concurrent use.
type Verifier interface {
	// Verify checks the signature of body against header and returns the
	// delivery's facts. body must be the raw request body, byte for byte.
	Verify(body []byte, header http.Header) (Delivery, error)
}

// New returns a Verifier for cfg.Provider. It fails on an unknown provider,
// no usable secret, a negative tolerance, or a secret the provider's scheme
// cannot use.
func New(cfg Config) (Verifier, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return providers[cfg.Provider].newVerifier(cfg)
}

// Message is what a provider puts on the wire besides the body.
type Message struct {
	// ID is the delivery id; ignored by stripe (its id is inside the body).
	ID string
	// EventType is sent as X-GitHub-Event by github; ignored by stripe and
	// standard, whose event type is inside the body.
	EventType string
}

// Signer signs a body exactly as the provider would, for `hookinbox send`,
// benchmarks and tests.
type Signer interface {
	// Sign returns the headers the provider would send with body at time
	// now (time.Now when now is zero). It fails when msg lacks a field the
	// provider always sends.
	Sign(body []byte, msg Message, now time.Time) (http.Header, error)
}

// NewSigner returns a Signer for provider using secret.
func NewSigner(provider, secret string) (Signer, error) {
	return NewConfigSigner(Config{Provider: provider, Secrets: []string{secret}})
}

// NewConfigSigner returns a Signer for cfg.Provider that signs with the
// first of cfg.Secrets, with cfg's scheme (HMAC) and NotificationURL. It
// fails for providers whose signature hookinbox cannot make (paypal and
// discord sign with a private key, mailgun inside the body).
func NewConfigSigner(cfg Config) (Signer, error) {
	p, ok := providers[cfg.Provider]
	if !ok {
		return nil, unknownProvider(cfg.Provider)
	}
	if len(cfg.Secrets) == 0 || cfg.Secrets[0] == "" {
		return nil, fmt.Errorf("%w: signing secret is empty", ErrNoSecrets)
	}
	if p.newSigner == nil {
		return nil, fmt.Errorf("%s: hookinbox cannot sign as this provider: %s", cfg.Provider, p.noSigner)
	}
	return p.newSigner(cfg)
}

// provider ties a provider name to its constructors. Adding a provider is a
// new file plus one line in providers; a preset is one row in presets.
type provider struct {
	newVerifier func(cfg Config) (Verifier, error)
	newSigner   func(cfg Config) (Signer, error) // nil: noSigner says why
	noSigner    string
	noSecrets   bool // verified without a configured secret (paypal)
}

var providers = func() map[string]provider {
	m := map[string]provider{
		ProviderGitHub:   {newVerifier: newGitHubVerifier, newSigner: newGitHubSigner},
		ProviderStripe:   {newVerifier: newStripeVerifier, newSigner: newStripeSigner},
		ProviderStandard: {newVerifier: newStandardVerifier, newSigner: newStandardSigner},
		ProviderHMAC:     {newVerifier: newHMACVerifier, newSigner: newHMACSigner},
		ProviderGitLab:   {newVerifier: newGitLabVerifier, newSigner: newGitLabSigner},
		ProviderDiscord:  {newVerifier: newDiscordVerifier, noSigner: "Discord signs with its private Ed25519 key"},
		ProviderPayPal:   {newVerifier: newPayPalVerifier, noSecrets: true, noSigner: "PayPal signs with its certificate"},
		ProviderTwilio:   {newVerifier: newTwilioVerifier, newSigner: newTwilioSigner},
		ProviderMailgun:  {newVerifier: newMailgunVerifier, noSigner: "Mailgun signs inside the body"},
	}
	for name := range presets {
		m[name] = provider{newVerifier: newPresetVerifier(name), newSigner: newPresetSigner(name)}
	}
	return m
}()

// Providers lists every provider name New accepts, sorted.
func Providers() []string {
	names := make([]string, 0, len(providers))
	for name := range providers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func unknownProvider(name string) error {
	return fmt.Errorf("%w %q (want one of %s)", ErrUnknownProvider, name, strings.Join(Providers(), ", "))
}
