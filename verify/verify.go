// Package verify checks webhook signatures the way each provider signs them
// and extracts what a verified request says about itself (delivery id, event
// type, time). It takes bytes and header values and returns typed errors; it
// knows nothing about HTTP frameworks, storage or queues.
package verify

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Provider names accepted by Config.Provider and NewSigner.
const (
	ProviderGitHub   = "github"
	ProviderStripe   = "stripe"
	ProviderStandard = "standard"
)

// DefaultTolerance is the max age (either direction) of a signed timestamp
// when Config.Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// MaxIDLength bounds delivery ids and event types (bytes).
const MaxIDLength = 255

// Every error returned by Verifier.Verify matches exactly one of
// ErrMissingHeader, ErrInvalidPayload, ErrInvalidSignature and
// ErrTimestampOutOfTolerance. Their messages go back to the webhook sender,
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
)

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
	// by stripe and standard only; GitHub signs no timestamp. Negative is
	// invalid. Defaults to DefaultTolerance.
	Tolerance time.Duration

	// Now returns the current time for tolerance checks. Defaults to
	// time.Now; tests inject a fixed clock.
	Now func() time.Time
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
	if _, ok := providers[c.Provider]; !ok {
		return unknownProvider(c.Provider)
	}
	if len(c.Secrets) == 0 {
		return fmt.Errorf("%w for provider %s", ErrNoSecrets, c.Provider)
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
	p, ok := providers[provider]
	if !ok {
		return nil, unknownProvider(provider)
	}
	if secret == "" {
		return nil, fmt.Errorf("%w: signing secret is empty", ErrNoSecrets)
	}
	return p.newSigner(secret)
}

// provider ties a provider name to its constructors. Adding a provider is a
// new file plus one line in providers.
type provider struct {
	newVerifier func(cfg Config) (Verifier, error)
	newSigner   func(secret string) (Signer, error)
}

var providers = map[string]provider{
	ProviderGitHub:   {newVerifier: newGitHubVerifier, newSigner: newGitHubSigner},
	ProviderStripe:   {newVerifier: newStripeVerifier, newSigner: newStripeSigner},
	ProviderStandard: {newVerifier: newStandardVerifier, newSigner: newStandardSigner},
}

func unknownProvider(name string) error {
	return fmt.Errorf("%w %q (want %s, %s or %s)",
		ErrUnknownProvider, name, ProviderGitHub, ProviderStripe, ProviderStandard)
}
