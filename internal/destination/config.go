package destination

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookinbox/hookinbox/internal/outbound"
)

// Destination is one of the user's HTTP services.
type Destination struct {
	// Name identifies the destination: [a-z0-9-]{1,64}. It is part of the
	// derived key of every send, so renaming a destination makes its
	// receivers see new ids. Required.
	Name string

	// URL receives POST requests. Required: http or https. Redirects are
	// never followed: a 3xx is a failed attempt whose error names the
	// Location, so the URL must be the address that takes the POST. Its
	// userinfo and query values are masked wherever it is shown.
	URL string

	// CAFile is a PEM file of the certificate authorities that sign the
	// destination's TLS certificate (a private CA), trusted instead of the
	// system's for this destination alone. Empty: the system's roots.
	CAFile string

	// Secret, when set, signs every request as Standard Webhooks do
	// (webhook-signature: v1,<base64 HMAC-SHA256> of
	// "{webhook-id}.{webhook-timestamp}.{body}", keyed with the base64 part
	// of "whsec_<base64>"). Empty: requests are not signed.
	Secret string

	// Header is sent with every request (e.g. Authorization). Values are
	// never logged.
	Header http.Header

	// Timeout bounds one request. Defaults to 10s.
	Timeout time.Duration

	// MaxInFlight is how many requests to this destination may be in
	// flight at once, across every replica: its slots, a row each, and a
	// buffer of results in each sender. Defaults to 10, at most
	// MaxMaxInFlight.
	MaxInFlight int

	// RateLimit is the most requests per second to this destination,
	// across every replica. 0: no limit. Defaults to 0.
	RateLimit float64

	// Retry says when a failed request is made again.
	Retry Retry

	// Circuit says when to stop sending to a failing destination.
	Circuit Circuit

	// Kafka or NATS, when set, makes the destination a broker's: each send
	// is published there instead of posted, with the same outbox, retries,
	// limits, circuit and order. URL, CAFile, Secret and Header are then
	// unused and must be empty.
	Kafka *Kafka
	NATS  *NATS
}

// Retry is a destination's retry schedule.
type Retry struct {
	// Schedule is the wait before each retry (the first is after the first
	// failure), each jittered by ±20%. A 429 or 503 whose Retry-After asks
	// for longer gets that, up to what remains of MaxAge: one more try as
	// the window closes. Defaults to DefaultSchedule.
	Schedule []time.Duration

	// MaxAge is how long after its first attempt a send may still be
	// retried. Defaults to 72h.
	MaxAge time.Duration
}

// DefaultSchedule is Retry.Schedule's default: about 10 hours of retries.
var DefaultSchedule = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour}

// Circuit is a destination's circuit breaker: after Failures consecutive
// failed requests the destination is open, and only one request, a probe,
// is sent every ProbeEvery until one succeeds. Pending sends wait.
type Circuit struct {
	// Failures opens the circuit. Defaults to 20.
	Failures int
	// ProbeEvery is the time between probes of an open circuit. Defaults
	// to 30s.
	ProbeEvery time.Duration
}

// Route sends a source's events to destinations.
type Route struct {
	// Source is a configured source's name, or "*" for every source.
	// Required.
	Source string

	// Events are the event types routed: exact names, "x.*" prefix
	// patterns, or "*" (see handlers.MatchEvent). Required.
	Events []string

	// To names the destinations. Required.
	To []string

	// Ordered sends one resource's events to a destination one at a time,
	// in the order they were processed: the next only after the previous
	// succeeded or finally failed. Different resources flow in parallel.
	// Defaults to false.
	Ordered bool

	// SkipStale, for ordered routes, does not send an event older than one
	// the destination already got for its resource (otherwise it is sent
	// with Hookinbox-Stale: true). Defaults to false.
	SkipStale bool

	// Filter is a CEL expression over the delivery (body, headers, event,
	// source, delivery_id, received_at, resource) that must yield true for
	// the route to send it. Empty: every routed event. docs/routes.md
	// says more.
	Filter string

	// Transform is a CEL expression whose value is the body sent instead of
	// the delivery's: a map or list as JSON, a string as text. Empty: the
	// delivery's body, byte for byte.
	Transform string

	// CostLimit bounds one evaluation of Filter or Transform, in CEL cost
	// units. Defaults to DefaultCostLimit.
	CostLimit uint64

	// MaxOutputBytes bounds the body Transform yields, and every value
	// Filter or Transform reads or builds, in bytes (a string counts its
	// length, any other value one): beyond it the send fails with a route
	// error naming the limit, and nothing is sent. Defaults to
	// max_body_bytes' default, config.DefaultMaxBodyBytes.
	MaxOutputBytes int
}

// Config configures destinations and their routes.
type Config struct {
	Destinations []Destination
	Routes       []Route

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

// WithDefaults fills what a Destination leaves unset.
func (d Destination) WithDefaults() Destination {
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	if d.MaxInFlight == 0 {
		d.MaxInFlight = DefaultMaxInFlight
	}
	if len(d.Retry.Schedule) == 0 {
		d.Retry.Schedule = DefaultSchedule
	}
	if d.Retry.MaxAge == 0 {
		d.Retry.MaxAge = DefaultMaxAge
	}
	if d.Circuit.Failures == 0 {
		d.Circuit.Failures = DefaultFailures
	}
	if d.Circuit.ProbeEvery == 0 {
		d.Circuit.ProbeEvery = DefaultProbeEvery
	}
	return d
}

var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// Validate checks one destination, naming the field at fault.
func (d Destination) Validate() error {
	switch {
	case !nameRE.MatchString(d.Name):
		return fmt.Errorf("name: %q must be 1–64 of a-z, 0-9 and -", d.Name)
	case d.Timeout < 0 || d.MaxInFlight < 0 || d.RateLimit < 0 || d.Retry.MaxAge < 0 || d.Circuit.Failures < 0 || d.Circuit.ProbeEvery < 0:
		return errors.New("timeout, max_in_flight, rate_limit, retry.max_age and circuit values must not be negative")
	case d.MaxInFlight > MaxMaxInFlight:
		return fmt.Errorf("max_in_flight: %d is over %d", d.MaxInFlight, MaxMaxInFlight)
	}
	if d.Kafka != nil || d.NATS != nil {
		if err := d.validateBroker(); err != nil {
			return err
		}
	} else if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url: %q is not an http(s) URL", outbound.MaskURL(d.URL))
	}
	if d.CAFile != "" {
		if _, err := loadCAFile(d.CAFile); err != nil {
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
func Validate(dests []Destination, routes []Route, sources []string) error {
	names := map[string]bool{}
	for i, d := range dests {
		if err := d.Validate(); err != nil {
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
