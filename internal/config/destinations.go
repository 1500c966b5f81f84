package config

import "fmt"

// Destination is one of the user's services: an HTTP endpoint, or a Kafka
// topic or NATS subject (destination.Destination says what each key
// means).
type Destination struct {
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
	TLS  struct {
		CAFile string `yaml:"ca_file"`
	} `yaml:"tls"`
	Secret      string            `yaml:"secret"`
	Headers     map[string]string `yaml:"headers"`
	Timeout     Duration          `yaml:"timeout"`
	MaxInFlight int               `yaml:"max_in_flight"`
	RateLimit   float64           `yaml:"rate_limit"`
	Retry       struct {
		Schedule []Duration `yaml:"schedule"`
		MaxAge   Duration   `yaml:"max_age"`
	} `yaml:"retry"`
	Circuit struct {
		Failures   int      `yaml:"failures"`
		ProbeEvery Duration `yaml:"probe_every"`
	} `yaml:"circuit"`
	// Kafka or NATS publishes to a broker instead of posting to url.
	Kafka *struct {
		Brokers []string `yaml:"brokers"`
		Topic   string   `yaml:"topic"`
		Key     string   `yaml:"key"`
	} `yaml:"kafka"`
	NATS *struct {
		URL     string `yaml:"url"`
		Subject string `yaml:"subject"`
	} `yaml:"nats"`
}

// Route sends a source's events to destinations.
type Route struct {
	Source    string   `yaml:"source"`
	Events    []string `yaml:"events"`
	To        []string `yaml:"to"`
	Ordered   bool     `yaml:"ordered"`
	SkipStale bool     `yaml:"skip_stale"`
	// Filter and Transform are CEL expressions (docs/routes.md); CostLimit
	// bounds one evaluation's steps, MaxOutputBytes the body Transform
	// yields and every value either reads or builds (defaults to
	// max_body_bytes).
	Filter         string `yaml:"filter"`
	Transform      string `yaml:"transform"`
	CostLimit      uint64 `yaml:"cost_limit"`
	MaxOutputBytes int    `yaml:"max_output_bytes"`
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
