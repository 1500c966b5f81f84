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
	// deliveries_failed, source_silent, backlog or kafka_lag.
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
	// KafkaLag: the Kafka source Source (required) more than Over
	// (required, more than 0) messages behind, summed over its partitions,
	// for For: at least two of the source's kafka.lag_every, so that two
	// readings agree; defaults to 5m.
	KafkaLag *struct {
		Source string   `yaml:"source"`
		Over   int64    `yaml:"over"`
		For    Duration `yaml:"for"`
	} `yaml:"kafka_lag"`
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
	lagged := map[string]bool{}
	for i, r := range a.Rules {
		if err := c.validateAlertRule(r); err != nil {
			return fmt.Errorf("alerts.rules[%d]%w", i, err)
		}
		if r.KafkaLag != nil {
			// One alert per (rule, subject): a second rule of the source
			// would take over the first one's alert.
			if lagged[r.KafkaLag.Source] {
				return fmt.Errorf("alerts.rules[%d].kafka_lag.source: a second kafka_lag rule of source %q", i, r.KafkaLag.Source)
			}
			lagged[r.KafkaLag.Source] = true
		}
	}
	return nil
}

func (c Config) validateAlertRule(r AlertRule) error {
	set := 0
	for _, isSet := range []bool{r.DestinationFailing != nil, r.SendsFailed != nil, r.DeliveriesFailed != nil,
		r.SourceSilent != nil, r.Backlog != nil, r.KafkaLag != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf(": want exactly one of destination_failing, sends_failed, deliveries_failed, source_silent, backlog, kafka_lag")
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
	case r.KafkaLag != nil:
		return c.validateKafkaLag(r.KafkaLag.Source, r.KafkaLag.Over, r.KafkaLag.For.Std())
	}
	return nil
}

// validateKafkaLag checks a kafka_lag rule against the source it names.
func (c Config) validateKafkaLag(source string, over int64, f time.Duration) error {
	s, ok := c.Source(source)
	switch {
	case !ok:
		return fmt.Errorf(".kafka_lag.source: no source named %q", source)
	case s.Kafka == nil:
		return fmt.Errorf(".kafka_lag.source: %q is not a kafka source", source)
	case over <= 0:
		return fmt.Errorf(".kafka_lag.over: %d (want more than 0 messages)", over)
	}
	if least := 2 * s.Kafka.LagEvery.Std(); f < least {
		return fmt.Errorf(".kafka_lag.for: %s (want at least %s: twice kafka.lag_every of source %q)", f, least, source)
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
		case r.KafkaLag != nil && r.KafkaLag.For == 0:
			r.KafkaLag.For = Duration(5 * time.Minute)
		}
	}
}
