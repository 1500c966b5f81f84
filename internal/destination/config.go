package destination

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

// DefaultSchedule is a destination's retry.schedule default: about 10
// hours of retries.
var DefaultSchedule = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour}

// Config configures destinations and their routes.
type Config struct {
	// Destinations and Routes are the configuration's own; Register fills
	// what a destination leaves unset (withDefaults).
	Destinations []config.Destination
	Routes       []config.Route

	// Sources are the configured sources' names, to expand Route.Source
	// "*" and to refuse a route naming an unknown source. Required.
	Sources []string

	// Pool is where sends are recorded and payloads read. Required.
	Pool *pgxpool.Pool

	// Observe, when set, is told about every request: the destination,
	// the outcome (succeeded, failed, retry) and how long it took.
	Observe func(destination, outcome string, d time.Duration)

	// Logger defaults to a discard logger.
	Logger *slog.Logger

	// PollInterval is how often an idle sender looks for sends that no
	// hint announced (those enqueued by another process, retries coming
	// due). A busy sender, or one told of a new send in this process,
	// looks every ActivePollInterval. Defaults to DefaultPollInterval.
	PollInterval time.Duration

	// SeenEvery is how often a started Service records that its process
	// has its destinations; a destination not recorded for
	// SeenLiveFactor × SeenEvery is configured on no running process
	// (known.go). Defaults to DefaultSeenEvery.
	SeenEvery time.Duration
}

const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxInFlight = 10
	// MaxMaxInFlight bounds MaxInFlight: far more requests than a sender
	// makes on a few cores (32 drain a backlog at about the database's
	// one-delivery rate: bench/README.md, "Destinations"), where a
	// mistyped value would create that many slot rows.
	MaxMaxInFlight    = 1000
	DefaultMaxAge     = 72 * time.Hour
	DefaultFailures   = 20
	DefaultProbeEvery = 30 * time.Second

	DefaultPollInterval = time.Second
	// ActivePollInterval is how often a sender looks for due sends while
	// it is busy, or for a second after it was told of a new send.
	ActivePollInterval = 20 * time.Millisecond
)

// withDefaults fills what a destination leaves unset.
func withDefaults(d config.Destination) config.Destination {
	if d.Timeout == 0 {
		d.Timeout = config.Duration(DefaultTimeout)
	}
	if d.MaxInFlight == 0 {
		d.MaxInFlight = DefaultMaxInFlight
	}
	if len(d.Retry.Schedule) == 0 {
		for _, wait := range DefaultSchedule {
			d.Retry.Schedule = append(d.Retry.Schedule, config.Duration(wait))
		}
	}
	if d.Retry.MaxAge == 0 {
		d.Retry.MaxAge = config.Duration(DefaultMaxAge)
	}
	if d.Circuit.Failures == 0 {
		d.Circuit.Failures = DefaultFailures
	}
	if d.Circuit.ProbeEvery == 0 {
		d.Circuit.ProbeEvery = config.Duration(DefaultProbeEvery)
	}
	return d
}

var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// validateDestination checks one destination, naming the field at fault.
func validateDestination(d config.Destination) error {
	switch {
	case !nameRE.MatchString(d.Name):
		return fmt.Errorf("name: %q must be 1–64 of a-z, 0-9 and -", d.Name)
	case d.Timeout < 0 || d.MaxInFlight < 0 || d.RateLimit < 0 || d.Retry.MaxAge < 0 || d.Circuit.Failures < 0 || d.Circuit.ProbeEvery < 0:
		return errors.New("timeout, max_in_flight, rate_limit, retry.max_age and circuit values must not be negative")
	case d.MaxInFlight > MaxMaxInFlight:
		return fmt.Errorf("max_in_flight: %d is over %d", d.MaxInFlight, MaxMaxInFlight)
	}
	if d.Kafka != nil || d.NATS != nil {
		if err := validateBroker(d); err != nil {
			return err
		}
	} else if !outbound.IsHTTPURL(d.URL) {
		return fmt.Errorf("url: %q is not an http(s) URL", outbound.MaskURL(d.URL))
	}
	if d.TLS.CAFile != "" {
		if _, err := loadCAFile(d.TLS.CAFile); err != nil {
			return err
		}
	}
	for _, s := range d.Retry.Schedule {
		if s <= 0 {
			return errors.New("retry.schedule: every wait must be positive")
		}
	}
	if d.Secret != "" {
		if _, err := standardwebhooks.NewWebhook(d.Secret); err != nil {
			return fmt.Errorf("secret: not a Standard Webhooks secret (want whsec_<base64>): %v", err)
		}
	}
	return nil
}

// loadCAFile reads a PEM file of CA certificates.
func loadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca_file: %s holds no PEM certificate", path)
	}
	return pool, nil
}

// validate checks the whole configuration.
func (c Config) validate() error {
	if c.Pool == nil {
		return errors.New("destination: Config.Pool is required")
	}
	return Validate(c.Destinations, c.Routes, c.Sources)
}

// Validate checks destinations and the routes to them, naming the key at
// fault ("destinations[0] (orders-api).url: …", "routes[1].to: …").
// sources are the configured sources' names.
func Validate(dests []config.Destination, routes []config.Route, sources []string) error {
	names := map[string]bool{}
	for i, d := range dests {
		if err := validateDestination(d); err != nil {
			return fmt.Errorf("destinations[%d] (%s).%w", i, d.Name, err)
		}
		if names[d.Name] {
			return fmt.Errorf("destinations[%d].name: %q is used twice", i, d.Name)
		}
		names[d.Name] = true
	}
	known := map[string]bool{"*": true}
	for _, s := range sources {
		known[s] = true
	}
	for i, r := range routes {
		switch {
		case !known[r.Source]:
			return fmt.Errorf("routes[%d].source: no source named %q", i, r.Source)
		case len(r.Events) == 0:
			return fmt.Errorf("routes[%d].events: empty (use \"*\" for every event)", i)
		case len(r.To) == 0:
			return fmt.Errorf("routes[%d].to: names no destination", i)
		case r.SkipStale && !r.Ordered:
			return fmt.Errorf("routes[%d].skip_stale: only ordered routes know what is stale", i)
		case r.MaxOutputBytes < 0 || r.MaxOutputBytes > MaxMaxOutputBytes:
			return fmt.Errorf("routes[%d].max_output_bytes: %d is not between 1 and %d (0: the default)", i, r.MaxOutputBytes, MaxMaxOutputBytes)
		}
		for _, e := range r.Events {
			if e == "" || (e != "*" && strings.Contains(strings.TrimSuffix(e, ".*"), "*")) {
				return fmt.Errorf("routes[%d].events: %q is not an event type, \"x.*\" or \"*\"", i, e)
			}
		}
		for _, to := range r.To {
			if !names[to] {
				return fmt.Errorf("routes[%d].to: no destination named %q", i, to)
			}
		}
		if _, err := compileRoute(r); err != nil {
			return fmt.Errorf("routes[%d] (%s).%w", i, r.Source, err)
		}
	}
	return nil
}
