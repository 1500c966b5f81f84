package config

import (
	"fmt"
	"net/http"

	"github.com/hookinbox/hookinbox/handlers/destination"
)

// Destination is one of the user's HTTP services (destination.Destination
// says what each key means).
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
}

// Route sends a source's events to destinations.
type Route struct {
	Source    string   `yaml:"source"`
	Events    []string `yaml:"events"`
	To        []string `yaml:"to"`
	Ordered   bool     `yaml:"ordered"`
	SkipStale bool     `yaml:"skip_stale"`
}

// ForwardDestination names the destination a source's forward_url stands
// for: forward_url is shorthand for that destination plus a route of every
// event of the source to it.
func ForwardDestination(source string) string { return source + "-forward" }

// DestinationsAndRoutes returns the configured destinations and routes,
// with each forward_url's expanded.
func (c Config) DestinationsAndRoutes() ([]destination.Destination, []destination.Route) {
	var (
		dests  []destination.Destination
		routes []destination.Route
	)
	for _, d := range c.Destinations {
		h := http.Header{}
		for k, v := range d.Headers {
			h.Set(k, v)
		}
		dd := destination.Destination{Name: d.Name, URL: d.URL, CAFile: d.TLS.CAFile, Secret: d.Secret, Header: h, Timeout: d.Timeout.Std(),
			MaxInFlight: d.MaxInFlight, RateLimit: d.RateLimit,
			Retry:   destination.Retry{MaxAge: d.Retry.MaxAge.Std()},
			Circuit: destination.Circuit{Failures: d.Circuit.Failures, ProbeEvery: d.Circuit.ProbeEvery.Std()}}
		for _, s := range d.Retry.Schedule {
			dd.Retry.Schedule = append(dd.Retry.Schedule, s.Std())
		}
		dests = append(dests, dd)
	}
	for _, r := range c.Routes {
		routes = append(routes, destination.Route{Source: r.Source, Events: r.Events, To: r.To, Ordered: r.Ordered, SkipStale: r.SkipStale})
	}
	for _, s := range c.Sources {
		if s.ForwardURL == "" {
			continue
		}
		name := ForwardDestination(s.Name)
		dests = append(dests, destination.Destination{Name: name, URL: s.ForwardURL})
		routes = append(routes, destination.Route{Source: s.Name, Events: []string{"*"}, To: []string{name}})
	}
	return dests, routes
}

// validateDestinations checks destinations, routes and forward_url
// shorthands together.
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
	sources := make([]string, len(c.Sources))
	for i, s := range c.Sources {
		sources[i] = s.Name
	}
	dests, routes := c.DestinationsAndRoutes()
	return destination.Validate(dests, routes, sources)
}
