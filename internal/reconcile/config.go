package reconcile

import (
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

// Config says which Stripe account to list events from and which hookinbox
// source recovered events belong to.
type Config struct {
	// Source is the hookinbox source (provider stripe) that recovered events
	// are recorded under, so that a late webhook for the same event is a
	// duplicate of it. Required.
	Source string

	// StripeAPI is the source's stripe block, as config decoded it:
	// config.StripeAPI says what each key means. APIKey is required;
	// WithDefaults fills APIBase.
	config.StripeAPI

	// HTTPClient makes the API calls. Defaults to a client with a 30 s
	// timeout per request.
	HTTPClient *http.Client

	// PageSize is how many events one list request asks for, 1 to 100.
	// Defaults to 100, Stripe's maximum, so a pass makes as few calls as
	// possible.
	PageSize int
}

// Defaults.
const (
	DefaultAPIBase  = "https://api.stripe.com"
	DefaultPageSize = 100
	maxPageSize     = 100 // Stripe refuses a larger limit
	defaultTimeout  = 30 * time.Second
)

// WithDefaults returns c with every unset option given its default.
func (c Config) WithDefaults() Config {
	if c.APIBase == "" {
		c.APIBase = DefaultAPIBase
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: defaultTimeout}
	}
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize
	}
	return c
}

// Validate reports the first option that cannot work. Unset options that
// have defaults are accepted. Messages name the field and never quote the
// key.
func (c Config) Validate() error {
	switch {
	case c.Source == "":
		return &ConfigError{Field: "stripe.source", Problem: "is required"}
	case c.APIKey == "":
		return &ConfigError{Field: "stripe.api_key", Problem: "is required"}
	case !strings.HasPrefix(c.APIKey, "sk_") && !strings.HasPrefix(c.APIKey, "rk_"):
		// The usual mistake is pasting the webhook signing secret (whsec_)
		// or the publishable key (pk_); neither can list events.
		return &ConfigError{Field: "stripe.api_key", Problem: "must be a secret key (sk_...) or a restricted key (rk_...)"}
	case c.PageSize < 0 || c.PageSize > maxPageSize:
		return &ConfigError{Field: "stripe.page_size", Problem: "must be between 1 and 100"}
	}
	if c.APIBase != "" && !outbound.IsHTTPURL(c.APIBase) {
		return &ConfigError{Field: "stripe.api_base", Problem: "must be an absolute http(s) URL"}
	}
	return nil
}

// ConfigError names an option of Config that is missing or invalid.
type ConfigError struct {
	Field   string // e.g. "stripe.api_key"
	Problem string // e.g. "is required"
}

func (e *ConfigError) Error() string { return e.Field + " " + e.Problem }
