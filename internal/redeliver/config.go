package redeliver

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

// DefaultAPIURL is GitHub.com's REST API.
const DefaultAPIURL = "https://api.github.com/"

// Config says which GitHub webhook to look at and how to reach GitHub.
// Field names in validation errors (github.token, github.repo, …) are the
// keys of a source's github block in hookinbox.yaml.
type Config struct {
	// Source is the hookinbox source the hook delivers to (inbox.source);
	// the inbox is asked about deliveries under this name. Required.
	Source string

	// GitHubAPI is the source's github block, as config decoded it:
	// config.GitHubAPI says what each key means. WithDefaults fills its
	// APIURL; RedeliverEvery is the caller's, which schedules the job.
	config.GitHubAPI

	// HTTPClient makes the calls to GitHub. Its Transport is wrapped to add
	// the token; the client itself is not modified. Defaults to a client
	// with a 30s timeout.
	HTTPClient *http.Client
}

// ErrInvalidConfig is matched (errors.Is) by every error Validate returns.
var ErrInvalidConfig = errors.New("invalid redelivery config")

// ConfigError is a Config problem. Its message starts with the field's
// configuration key, so it reads well under a caller's prefix such as
// "sources[0] (github).".
type ConfigError struct {
	Field   string // e.g. "github.repo"
	Message string // the full message, naming Field
}

func (e *ConfigError) Error() string { return e.Message }

func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

func configErr(field, msg string) error {
	return &ConfigError{Field: field, Message: msg}
}

// WithDefaults returns c with zero values replaced by their defaults.
func (c Config) WithDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return c
}

// Validate reports the first problem with c as a *ConfigError. It accepts
// c before or after WithDefaults.
func (c Config) Validate() error {
	if c.Source == "" {
		return configErr("source", "source is required")
	}
	if c.AppID != 0 || c.PrivateKey != "" {
		return c.validateApp()
	}
	if c.Token == "" {
		return configErr("github.token", "github.token (or github.app_id and github.private_key, for a GitHub App) is required")
	}
	switch {
	case c.Repo == "" && c.Org == "":
		return configErr("github.repo", "github.repo or github.org is required")
	case c.Repo != "" && c.Org != "":
		return configErr("github.repo", "github.repo and github.org are exclusive: set one (repository hook or organisation hook)")
	case c.Repo != "":
		owner, name, ok := strings.Cut(c.Repo, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return configErr("github.repo", `github.repo must be "owner/name", got "`+c.Repo+`"`)
		}
	case strings.Contains(c.Org, "/"):
		return configErr("github.org", `github.org must be an organisation login without "/", got "`+c.Org+`"`)
	}
	if c.HookID <= 0 {
		return configErr("github.hook_id", "github.hook_id is required (a positive integer)")
	}
	return c.validateAPIURL()
}

func (c Config) validateAPIURL() error {
	if c.APIURL != "" && !outbound.IsHTTPURL(c.APIURL) {
		return configErr("github.api_url", `github.api_url must be an absolute http(s) URL such as "https://github.example.com/api/v3/", got "`+c.APIURL+`"`)
	}
	return nil
}

// validateApp checks the GitHub App settings, the key included.
func (c Config) validateApp() error {
	switch {
	case c.Token != "":
		return configErr("github.token", "github.token and github.app_id are exclusive: a token reaches a repository's or organisation's hook, an App its own")
	case c.AppID <= 0:
		return configErr("github.app_id", "github.app_id is required with github.private_key (the App's numeric id)")
	case c.PrivateKey == "":
		return configErr("github.private_key", "github.private_key is required with github.app_id")
	case c.Repo != "" || c.Org != "" || c.HookID != 0:
		return configErr("github.hook_id", "github.hook_id, github.repo and github.org do not apply to a GitHub App, which has one webhook, its own: drop them")
	}
	if _, err := loadAppKey(c.PrivateKey); err != nil {
		return err
	}
	return c.validateAPIURL()
}
