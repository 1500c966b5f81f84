package config

import (
	"fmt"
	"slices"
	"time"
)

// AlertsSource is the built-in source alerts are recorded under; no
// configured source may take its name.
const AlertsSource = "hookinbox"

// Alerts raises operational alerts and sends them to destinations
// (docs/observability.md, "Alerts").
type Alerts struct {
	// To are the destinations every alert is sent to, through the same
	// outbox as any send. An alert about a failing destination is not sent
	// to that destination. Required with rules.
	To []string `yaml:"to"`
	// Transform is a built-in body for chat webhooks: "slack", "discord"
	// or "teams". Empty: the alert's JSON event.
	Transform string `yaml:"transform"`
	// Every is how often the rules are evaluated. Defaults to 30s.
	Every Duration `yaml:"every"`
	// Rules, each with one key: destination_failing, sends_failed,
	// deliveries_failed, source_silent or backlog.
	Rules []AlertRule `yaml:"rules"`
}

// AlertRule is one rule; exactly one field is set.
type AlertRule struct {
	// DestinationFailing: a destination's circuit open, or every request
	// failing, for For (default 10m).
	DestinationFailing *struct {
		For Duration `yaml:"for"`
	} `yaml:"destination_failing"`
	// SendsFailed: at least Min (default 1) sends of a destination failed
	// for good and not retried.
	SendsFailed *struct {
		Min int `yaml:"min"`
	} `yaml:"sends_failed"`
	// DeliveriesFailed: at least Min (default 1) deliveries of a source
	// failed for good and not replayed.
	DeliveriesFailed *struct {
		Min int `yaml:"min"`
	} `yaml:"deliveries_failed"`
	// SourceSilent: Source accepted no delivery for For (required; at
	// most 48h, the console's counts' retention).
	SourceSilent *struct {
		Source string   `yaml:"source"`
		For    Duration `yaml:"for"`
	} `yaml:"source_silent"`
	// Backlog: more than Over deliveries wait to be processed, for For
	// (default 5m).
	Backlog *struct {
		Over int64    `yaml:"over"`
		For  Duration `yaml:"for"`
	} `yaml:"backlog"`
}

// validateAlerts checks the alerts section against the sources and
// destinations it names.
func (c Config) validateAlerts() error {
	a := c.Alerts
	if len(a.Rules) == 0 && len(a.To) == 0 {
		return nil
	}
	if len(a.To) == 0 {
		return fmt.Errorf("alerts.to: name the destinations alerts are sent to")
	}
	names := map[string]bool{}
	for _, d := range c.Destinations {
		names[d.Name] = true
	}
	for i, to := range a.To {
		if !names[to] {
			return fmt.Errorf("alerts.to[%d]: no destination named %q", i, to)
		}
	}
	if !slices.Contains([]string{"", "slack", "discord", "teams"}, a.Transform) {
		return fmt.Errorf("alerts.transform: %q (want slack, discord, teams, or none for the JSON event)", a.Transform)
	}
	for i, r := range a.Rules {
		if err := c.validateAlertRule(r); err != nil {
			return fmt.Errorf("alerts.rules[%d]%w", i, err)
		}
	}
	return nil
}

func (c Config) validateAlertRule(r AlertRule) error {
	set := 0
	for _, isSet := range []bool{r.DestinationFailing != nil, r.SendsFailed != nil, r.DeliveriesFailed != nil,
		r.SourceSilent != nil, r.Backlog != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf(": want exactly one of destination_failing, sends_failed, deliveries_failed, source_silent, backlog")
	}
	switch {
	case r.SendsFailed != nil && r.SendsFailed.Min < 0, r.DeliveriesFailed != nil && r.DeliveriesFailed.Min < 0:
		return fmt.Errorf(".min: must be positive")
	case r.Backlog != nil && r.Backlog.Over < 0:
		return fmt.Errorf(".backlog.over: must be positive")
	case r.SourceSilent != nil:
		if _, ok := c.Source(r.SourceSilent.Source); !ok {
			return fmt.Errorf(".source_silent.source: no source named %q", r.SourceSilent.Source)
		}
		if f := r.SourceSilent.For.Std(); f <= 0 || f > 48*time.Hour {
			return fmt.Errorf(".source_silent.for: %s (want more than 0 and at most 48h)", f)
		}
	}
	return nil
}

// alertDefaults fills the alerts section's defaults.
func (a *Alerts) alertDefaults() {
	if a.Every == 0 {
		a.Every = Duration(30 * time.Second)
	}
	for _, r := range a.Rules {
		switch {
		case r.DestinationFailing != nil && r.DestinationFailing.For == 0:
			r.DestinationFailing.For = Duration(10 * time.Minute)
		case r.SendsFailed != nil && r.SendsFailed.Min == 0:
			r.SendsFailed.Min = 1
		case r.DeliveriesFailed != nil && r.DeliveriesFailed.Min == 0:
			r.DeliveriesFailed.Min = 1
		case r.Backlog != nil && r.Backlog.For == 0:
			r.Backlog.For = Duration(5 * time.Minute)
		}
	}
}
