package config

import "fmt"

// Destination is one of the user's services: an HTTP endpoint, or a Kafka
// topic or NATS subject. internal/destination sends to it from this very
// type and owns its defaults and checks (destination.Validate, run by
// cli.CheckConfig): what is left unset here stays zero.
type Destination struct {
	// Name identifies the destination: [a-z0-9-]{1,64}. It is part of the
	// derived key of every send, so renaming a destination makes its
	// receivers see new ids. Required.
	Name string `yaml:"name"`

	// URL receives POST requests. Required: http or https. Redirects are
	// never followed: a 3xx is a failed attempt whose error names the
	// Location, so the URL must be the address that takes the POST. Its
	// userinfo and query values are masked wherever it is shown.
	URL string `yaml:"url"`

	// TLS says whom to trust for the destination's certificate.
	TLS TLS `yaml:"tls"`

	// Secret, when set, signs every request as Standard Webhooks do
	// (webhook-signature: v1,<base64 HMAC-SHA256> of
	// "{webhook-id}.{webhook-timestamp}.{body}", keyed with the base64 part
	// of "whsec_<base64>"). Empty: requests are not signed.
	Secret string `yaml:"secret"`

	// Headers are sent with every request (e.g. Authorization). Values are
	// never logged.
	Headers map[string]string `yaml:"headers"`

	// Timeout bounds one request. Defaults to destination.DefaultTimeout
	// (10s).
	Timeout Duration `yaml:"timeout"`

	// MaxInFlight is how many requests to this destination may be in
	// flight at once, across every replica: its slots, a row each, and a
	// buffer of results in each sender. Defaults to
	// destination.DefaultMaxInFlight (10), at most
	// destination.MaxMaxInFlight.
	MaxInFlight int `yaml:"max_in_flight"`

	// RateLimit is the most requests per second to this destination,
	// across every replica. 0: no limit. Defaults to 0.
	RateLimit float64 `yaml:"rate_limit"`

	// Retry says when a failed request is made again.
	Retry Retry `yaml:"retry"`

	// Circuit says when to stop sending to a failing destination.
	Circuit Circuit `yaml:"circuit"`

	// Kafka or NATS, when set, makes the destination a broker's: each send
	// is published there instead of posted, with the same outbox, retries,
	// limits, circuit and order. URL, TLS, Secret and Headers are then
	// unused and must be empty.
	Kafka *KafkaDestination `yaml:"kafka"`
	NATS  *NATSDestination  `yaml:"nats"`
}

// TLS is a destination's trust.
type TLS struct {
	// CAFile is a PEM file of the certificate authorities that sign the
	// destination's TLS certificate (a private CA), trusted instead of the
	// system's for this destination alone. Empty: the system's roots.
	CAFile string `yaml:"ca_file"`
}

// Retry is a destination's retry schedule.
type Retry struct {
	// Schedule is the wait before each retry (the first is after the first
	// failure), each jittered by ±20%. A 429 or 503 whose Retry-After asks
	// for longer gets that, up to what remains of MaxAge: one more try as
	// the window closes. Defaults to destination.DefaultSchedule.
	Schedule []Duration `yaml:"schedule"`

	// MaxAge is how long after its first attempt a send may still be
	// retried. Defaults to destination.DefaultMaxAge (72h).
	MaxAge Duration `yaml:"max_age"`
}

// Circuit is a destination's circuit breaker: after Failures consecutive
// failed requests the destination is open, and only one request, a probe,
// is sent every ProbeEvery until one succeeds. Pending sends wait.
type Circuit struct {
	// Failures opens the circuit. Defaults to destination.DefaultFailures
	// (20).
	Failures int `yaml:"failures"`
	// ProbeEvery is the time between probes of an open circuit. Defaults
	// to destination.DefaultProbeEvery (30s).
	ProbeEvery Duration `yaml:"probe_every"`
}

// KafkaDestination is a destination that publishes to a Kafka topic
// instead of posting to a URL.
type KafkaDestination struct {
	// Brokers are the seed brokers, host:port. Required.
	Brokers []string `yaml:"brokers"`
	// Topic is the topic each message goes to; "{source}" and "{event}"
	// in it are replaced by the delivery's source and event type (a
	// character a topic name cannot hold becomes "_"). Required.
	Topic string `yaml:"topic"`
	// Key is each message's key: "resource" (the default; one resource's
	// events land in one partition, in order) or "delivery" (the delivery
	// id).
	Key string `yaml:"key"`
}

// NATSDestination is a destination that publishes to a NATS JetStream
// subject.
type NATSDestination struct {
	// URL is the server's, nats://host:port. Required.
	URL string `yaml:"url"`
	// Subject is each message's subject, with "{source}" and "{event}"
	// replaced as KafkaDestination.Topic's are (a character a subject
	// token cannot hold becomes "_"). A stream must capture it: a subject
	// no stream takes is a failed attempt, never a plain NATS publish that
	// nobody keeps. Required.
	Subject string `yaml:"subject"`
}

// Route sends a source's events to destinations. internal/destination
// compiles and checks it (destination.Validate).
type Route struct {
	// Source is a configured source's name, or "*" for every source.
	// Required.
	Source string `yaml:"source"`

	// Events are the event types routed: exact names, "x.*" prefix
	// patterns, or "*" (see handlers.MatchEvent). Required.
	Events []string `yaml:"events"`

	// To names the destinations. Required.
	To []string `yaml:"to"`

	// Ordered sends one resource's events to a destination one at a time,
	// in the order they were processed: the next only after the previous
	// succeeded or finally failed. Different resources flow in parallel.
	// Defaults to false.
	Ordered bool `yaml:"ordered"`

	// SkipStale, for ordered routes, does not send an event older than one
	// the destination already got for its resource (otherwise it is sent
	// with Hookinbox-Stale: true). Defaults to false.
	SkipStale bool `yaml:"skip_stale"`

	// Filter is a CEL expression over the delivery (body, headers, event,
	// source, delivery_id, received_at, resource) that must yield true for
	// the route to send it. Empty: every routed event. docs/routes.md
	// says more.
	Filter string `yaml:"filter"`

	// Transform is a CEL expression whose value is the body sent instead of
	// the delivery's: a map or list as JSON, a string as text. Empty: the
	// delivery's body, byte for byte.
	Transform string `yaml:"transform"`

	// CostLimit bounds one evaluation of Filter or Transform, in CEL cost
	// units. Defaults to destination.DefaultCostLimit.
	CostLimit uint64 `yaml:"cost_limit"`

	// MaxOutputBytes bounds the body Transform yields, and every value
	// Filter or Transform reads or builds, in bytes (a string counts its
	// length, any other value one): beyond it the send fails with a route
	// error naming the limit, and nothing is sent. Defaults to
	// max_body_bytes, so a transform sends no more than a source may
	// receive.
	MaxOutputBytes int `yaml:"max_output_bytes"`
}

// ForwardDestination names the destination a source's forward_url stands
// for: forward_url is shorthand for that destination plus a route of every
// event of the source to it.
func ForwardDestination(source string) string { return source + "-forward" }

// validateDestinations checks that forward_url shorthands fit beside the
// destinations; the destinations and routes themselves are checked where
// they are built (cli.CheckConfig, through destination.Validate).
func (c Config) validateDestinations() error {
	names := map[string]bool{}
	for _, d := range c.Destinations {
		names[d.Name] = true
	}
	for i, s := range c.Sources {
		if s.ForwardURL != "" && names[ForwardDestination(s.Name)] {
			return fmt.Errorf("sources[%d] (%s).forward_url: stands for destination %q, which is also configured; use one or the other",
				i, s.Name, ForwardDestination(s.Name))
		}
		if s.ForwardURL != "" && len(ForwardDestination(s.Name)) > 64 {
			return fmt.Errorf("sources[%d] (%s).forward_url: the source's name is too long for the shorthand; configure a destination and a route",
				i, s.Name)
		}
	}
	return nil
}
