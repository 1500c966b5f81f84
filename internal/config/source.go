package config

import (
	"regexp"
	"time"

	"github.com/hookinbox/hookinbox/verify"
)

// GitHubAPI lets hookinbox ask GitHub about a source's webhook, to recover
// deliveries GitHub failed to make. internal/redeliver works from this
// type and owns its defaults and checks (redeliver.Config); its errors
// name these keys.
type GitHubAPI struct {
	// APIURL is GitHub's REST API base. It is used as given (a trailing
	// slash is added), so GitHub Enterprise Server needs the full
	// https://HOST/api/v3/. Defaults to redeliver.DefaultAPIURL
	// (https://api.github.com/).
	APIURL string `yaml:"api_url"`

	// Token authenticates to GitHub. Listing and redelivering need
	// admin:repo_hook (repository hooks) or admin:org_hook (organisation
	// hooks), read and write; a fine-grained token needs "Webhooks: read
	// and write". It never appears in errors or logs. Required unless
	// AppID and PrivateKey are set.
	Token string `yaml:"token"`

	// Repo is "owner/name" for a repository hook, Org an organisation's
	// login for an organisation hook: exactly one is required with Token.
	Repo string `yaml:"repo"`
	Org  string `yaml:"org"`

	// HookID is the webhook's id, as in the hook's settings URL
	// (…/settings/hooks/{id}). Required with Token.
	HookID int64 `yaml:"hook_id"`

	// AppID and PrivateKey select a GitHub App's webhook instead: the one
	// webhook an App has, reached at /app/hook/deliveries with a JWT the
	// App's private key signs. PrivateKey is the PEM text, a ${VAR}
	// holding it, or the path of a file holding it. Exclusive with Token,
	// Repo, Org and HookID.
	AppID      int64  `yaml:"app_id"`
	PrivateKey string `yaml:"private_key"`

	// RedeliverEvery runs the recovery periodically. Zero: only on request.
	RedeliverEvery Duration `yaml:"redeliver_every"`
}

// StripeAPI lets hookinbox list a source's undelivered Stripe events.
// internal/reconcile works from this type and owns its defaults and
// checks (reconcile.Config).
type StripeAPI struct {
	// APIKey is a Stripe secret key (sk_...) or a restricted key (rk_...)
	// with read access to events. Required. It is sent only to APIBase and
	// never appears in an error.
	APIKey string `yaml:"api_key"`

	// APIBase is the Stripe API's base URL, without /v1. Tests point it at
	// a local server. Defaults to reconcile.DefaultAPIBase
	// (https://api.stripe.com).
	APIBase string `yaml:"api_base"`
}

// Source is one sender.
type Source struct {
	// Name is the route segment: [a-z0-9-]{1,64}, unique.
	Name string `yaml:"name"`

	// Provider is github, stripe, standard, hmac (with HMAC) or one of the
	// presets verify.Providers lists.
	Provider string `yaml:"provider"`

	// Secrets are the signing secrets; any one may match, so a new secret can
	// be added before the provider switches to it. Entries that expand to ""
	// (an unset ${VAR}) are dropped; at least one must remain.
	Secrets []string `yaml:"secrets"`

	// Tolerance is the maximum age, either way, of a signed timestamp
	// (every provider that signs one). Defaults to 5m.
	Tolerance Duration `yaml:"tolerance"`

	// HMAC describes the scheme of an hmac source: which header holds the
	// signature, what is signed, and where the id, event type and times
	// are. Required for hmac sources only.
	HMAC *verify.HMACScheme `yaml:"hmac"`

	// NotificationURL is the URL the sender calls, exactly as configured at
	// the sender: the sources whose signature covers it (square, twilio,
	// an hmac scheme signing {url}) need it.
	NotificationURL string `yaml:"notification_url"`

	// PayPal (paypal sources) reaches PayPal's verify-webhook-signature
	// API, which checks the signatures: a paypal source needs no secrets.
	PayPal *verify.PayPalConfig `yaml:"paypal"`

	// ForwardURL receives every delivery of the source: shorthand for a
	// destination named "<name>-forward" with this URL and a route of every
	// event of the source to it. Empty: no forwarding.
	ForwardURL string `yaml:"forward_url"`

	// ResourceField is the dotted JSON path of the id of the resource an
	// event is about, for ordering (not for github and stripe, whose
	// resources are built in). Defaults to "data.id" for standard sources,
	// to the preset's field for presets, and to none for hmac sources.
	ResourceField string `yaml:"resource_field"`

	// GitHub (github sources) enables recovering failed deliveries.
	GitHub *GitHubAPI `yaml:"github"`

	// Stripe (stripe sources) enables reconciling undelivered events.
	Stripe *StripeAPI `yaml:"stripe"`

	// Retention overrides retention.inbox for this source.
	Retention Duration `yaml:"retention"`

	// AllowShortRetention accepts a retention below ReplayHorizon, and with
	// it that a late retry of a deleted delivery is processed as new.
	AllowShortRetention bool `yaml:"allow_short_retention"`

	// BodyDedup makes a body the source already sent a duplicate whatever
	// its delivery id (200 "duplicate", with "duplicate_of"), while the
	// inbox keeps the first; the event type tells bodies apart only where
	// it is signed, and for shopify and bitbucket (DedupBodiesByType).
	// Defaults to true for providers whose signature does not cover the
	// delivery id (github, gitlab, shopify, razorpay, bitbucket, twilio,
	// linear; an hmac scheme that does not sign it), whose captured
	// requests anyone could post again under a fresh id, and to false for
	// the others. Set false for a sender that sends identical bodies as
	// distinct events.
	BodyDedup *bool `yaml:"body_dedup"`

	// RedactHeaders are request headers that verification may read but
	// that are never stored, nor shown in the admin API, the console or
	// the CLI: secrets a sender or a proxy in front of hookinbox adds
	// (an API key, a shared token). Header names, matched
	// case-insensitively. Authorization, Proxy-Authorization, Cookie and
	// the provider's own secret headers (gitlab's X-Gitlab-Token) are
	// always dropped. Defaults to none.
	RedactHeaders []string `yaml:"redact_headers"`

	// Kafka makes the source read Kafka topics instead of receiving
	// webhooks (provider kafka; no secrets). Nil: a webhook source.
	Kafka *KafkaSource `yaml:"kafka"`
}

// namePattern is what a source's or an admin token's name may be: both
// end up in URLs, log lines and sessions.
var namePattern = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// InboxRetention is how long the source's processed deliveries are kept.
func (c Config) InboxRetention(s Source) time.Duration {
	if s.Retention != 0 {
		return s.Retention.Std()
	}
	return c.Retention.Inbox.Std()
}

// VerifyConfig is the source's verify.Config: verify.New builds its
// verifier from it, verify.NewConfigSigner signs as its sender.
func (s Source) VerifyConfig() verify.Config {
	return verify.Config{Provider: s.Provider, Secrets: s.Secrets, Tolerance: s.Tolerance.Std(),
		HMAC: s.HMAC, NotificationURL: s.NotificationURL, PayPal: s.PayPal}
}

// DedupBodies says whether ingest treats a body the source already sent
// as a duplicate (BodyDedup).
func (s Source) DedupBodies() bool {
	if s.BodyDedup != nil {
		return *s.BodyDedup
	}
	if s.Kafka != nil {
		return false // the broker's redeliveries carry their id
	}
	return verify.SignatureCovers(s.Provider, s.HMAC).ReplayableUnderNewID()
}

// DedupBodiesByType says whether body dedup compares the event type too
// (verify.DedupBodyByType).
func (s Source) DedupBodiesByType() bool {
	return verify.DedupBodyByType(s.Provider, s.HMAC)
}

// Source returns the named source.
func (c Config) Source(name string) (Source, bool) {
	for _, s := range c.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}
