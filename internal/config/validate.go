package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hookinbox/hookinbox/internal/outbound"
	"github.com/hookinbox/hookinbox/verify"
)

func (c Config) validate() error {
	if err := c.validateListens(); err != nil {
		return err
	}
	return c.validateServe()
}

// validateListens checks the listeners' addresses, which client commands
// read too.
func (c Config) validateListens() error {
	for _, l := range []struct{ key, addr, env string }{{"listen", c.Listen, c.listenEnv}, {"admin.listen", c.Admin.Listen, c.adminListenEnv}} {
		if err := checkListen(l.addr); err != nil {
			if l.env != "" {
				return fmt.Errorf("%s: %w (set by %s)", l.key, err, l.env)
			}
			return fmt.Errorf("%s: %w", l.key, err)
		}
	}
	return nil
}

// validateServe checks what only serve uses.
func (c Config) validateServe() error {
	if err := c.Admin.validateTokens(); err != nil {
		return err
	}
	if c.Admin.SignIn.Burst < 1 {
		return fmt.Errorf("admin.sign_in.burst: %d (want 1 or more wrong tokens before an address is slowed)", c.Admin.SignIn.Burst)
	}
	if e := c.Admin.SignIn.Every.Std(); e < time.Millisecond || e > time.Hour {
		return fmt.Errorf("admin.sign_in.every: %s (want between 1ms and 1h)", e)
	}
	if c.MaxBodyBytes < 0 {
		return errors.New("max_body_bytes: must be positive")
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		return fmt.Errorf("log.format: %q (want text or json)", c.Log.Format)
	}
	if _, ok := LogLevels[c.Log.Level]; !ok {
		return fmt.Errorf("log.level: %q (want debug, info, warn or error)", c.Log.Level)
	}
	if n := c.Log.DeliveriesPerSecond; n != nil && *n < 0 {
		return fmt.Errorf("log.deliveries_per_second: %d (want 0, a line for every delivery, or more)", *n)
	}
	if c.Jobs.RescueStuckAfter <= c.Jobs.Timeout {
		return fmt.Errorf("jobs.rescue_stuck_after: %s must exceed jobs.timeout (%s), or running jobs would be run twice",
			c.Jobs.RescueStuckAfter.Std(), c.Jobs.Timeout.Std())
	}
	if c.Jobs.OrphanGrace.Std() < time.Minute {
		return fmt.Errorf("jobs.orphan_grace: %s is under 1m", c.Jobs.OrphanGrace.Std())
	}
	// The sweep tells a cancelled job's deliveries from lost ones by the
	// cancelled job: River must keep it until the sweep has seen it.
	if c.Retention.RiverCancelled.Std() < 2*c.Jobs.OrphanGrace.Std() {
		return fmt.Errorf("retention.river_cancelled: %s must be at least twice jobs.orphan_grace (%s), or a delivery an operator cancelled could be swept up and processed",
			c.Retention.RiverCancelled.Std(), c.Jobs.OrphanGrace.Std())
	}
	if w := c.Ingest.BatchWindow.Std(); w < 0 || w > 100*time.Millisecond {
		return errors.New("ingest.batch_window: must be between 0 (no batching) and 100ms")
	}
	if c.Jobs.BatchSize < 1 || c.Jobs.BatchSize > 10000 {
		return errors.New("jobs.batch_size: must be between 1 (no batching) and 10000")
	}
	if c.Jobs.BatchWindow < 0 || c.Jobs.BatchWindow.Std() > time.Second {
		return errors.New("jobs.batch_window: must be between 0 and 1s")
	}
	if c.Retention.BatchSize < 1 {
		return errors.New("retention.batch_size: must be positive")
	}
	for key, u := range map[string]string{"downstream.fulfillment_url": c.Downstream.FulfillmentURL, "downstream.payments_url": c.Downstream.PaymentsURL} {
		if err := checkURL(u); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	seen := map[string]bool{}
	for i, s := range c.Sources {
		if err := c.validateSource(i, s, seen); err != nil {
			return err
		}
	}
	if err := c.validateDestinations(); err != nil {
		return err
	}
	return c.validateAlerts()
}

// checkListen accepts a host:port with a numeric port. A bare port is the
// likeliest slip, and net.Listen would take it for a host name.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, convErr := strconv.ParseUint(addr, 10, 16); convErr == nil {
			return fmt.Errorf("%q is not host:port; did you mean %q?", addr, ":"+addr)
		}
		return fmt.Errorf("%q is not host:port (e.g. \":8080\" or \"127.0.0.1:8080\")", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: the port must be a number from 0 to 65535", addr)
	}
	return nil
}

// checkURL accepts "" (not configured) or an absolute http(s) URL.
func checkURL(raw string) error {
	if raw == "" {
		return nil
	}
	if !outbound.IsHTTPURL(raw) {
		return fmt.Errorf("%q is not an absolute http(s) URL", outbound.MaskURL(raw))
	}
	return nil
}

// validateSource checks one source; seen holds the names before it.
func (c Config) validateSource(i int, s Source, seen map[string]bool) error {
	key := fmt.Sprintf("sources[%d]", i)
	if !namePattern.MatchString(s.Name) {
		return fmt.Errorf("%s.name: %q must match [a-z0-9-]{1,64}", key, s.Name)
	}
	key = fmt.Sprintf("sources[%d] (%s)", i, s.Name)
	if s.Name == AlertsSource {
		return fmt.Errorf("%s.name: %q is the source of hookinbox's own alerts", key, s.Name)
	}
	if seen[s.Name] {
		return fmt.Errorf("%s.name: duplicate source name", key)
	}
	seen[s.Name] = true
	if s.Provider == verify.ProviderGitHub || s.Provider == verify.ProviderStripe {
		if s.ResourceField != "" {
			return fmt.Errorf("%s.resource_field: %s sources order by their built-in resources", key, s.Provider)
		}
	}
	if keep := c.InboxRetention(s); keep < ReplayHorizon && !s.AllowShortRetention {
		field := key + ".retention"
		if s.Retention == 0 {
			field = "retention.inbox"
		}
		return fmt.Errorf("%s: %s keeps %s's deliveries less than %s, the longest a provider may still resend one "+
			"(GitHub allows manual redelivery for 3 days, Stripe retries for 3 days); a resend after its row is deleted "+
			"is processed as a new delivery. Set allow_short_retention: true on the source to accept that",
			field, keep, s.Name, ReplayHorizon)
	}
	if err := CheckRedactHeaders(s.RedactHeaders); err != nil {
		return fmt.Errorf("%s.redact_headers%w", key, err)
	}
	if s.GitHub != nil {
		if s.Provider != verify.ProviderGitHub {
			return fmt.Errorf("%s.github: only github sources take GitHub API settings", key)
		}
	}
	if s.Stripe != nil {
		if s.Provider != verify.ProviderStripe {
			return fmt.Errorf("%s.stripe: only stripe sources take Stripe API settings", key)
		}
	}
	if err := checkURL(s.ForwardURL); err != nil {
		return fmt.Errorf("%s.forward_url: %w", key, err)
	}
	if err := checkURL(s.NotificationURL); err != nil {
		return fmt.Errorf("%s.notification_url: %w", key, err)
	}
	if s.Kafka != nil {
		return s.validateKafka(key)
	}
	if s.Provider == ProviderKafka {
		return fmt.Errorf("%s.kafka: required for provider kafka (brokers, topics)", key)
	}
	return checkVerifier(key, s)
}

// checkVerifier checks that the source's verifier can be built: its
// provider, secrets and scheme.
func checkVerifier(key string, s Source) error {
	if _, err := verify.New(s.VerifyConfig()); err != nil {
		var cerr *verify.ConfigError
		switch {
		case errors.Is(err, verify.ErrUnknownProvider):
			return fmt.Errorf("%s.provider: %w", key, err)
		case errors.As(err, &cerr):
			return fmt.Errorf("%s.%w", key, err)
		case errors.Is(err, verify.ErrNoSecrets):
			return fmt.Errorf("%s.secrets: no non-empty secret (is the ${VAR} it names set?)", key)
		default:
			return fmt.Errorf("%s.secrets: %w", key, err)
		}
	}
	return nil
}
