package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hookinbox/hookinbox/internal/alerts"
	"github.com/hookinbox/hookinbox/internal/config"
)

// alertsOn reports whether the config raises alerts.
func alertsOn(cfg config.Config) bool { return len(cfg.Alerts.Rules) > 0 }

// sourceNames are the sources routes may name: the configured ones, and
// alerts' built-in one when alerts are on.
func sourceNames(cfg config.Config) []string {
	names := make([]string, 0, len(cfg.Sources)+1)
	for _, s := range cfg.Sources {
		names = append(names, s.Name)
	}
	if alertsOn(cfg) {
		names = append(names, alerts.Source)
	}
	return names
}

// alertTransforms are the built-in bodies of alerts.transform. A summary
// quotes what a destination answered, so each is escaped for its platform
// (a destination's "<!channel>" is text, not a mention), and Discord's
// message may mention no one.
var alertTransforms = map[string]string{
	"slack":   `{"text": slackEscape(body.summary)` + alertLinks("slackEscape") + `}`,
	"discord": `{"content": discordEscape(body.summary)` + alertLinks("") + `, "allowed_mentions": {"parse": []}}`,
	"teams":   `{"text": teamsEscape(body.summary)` + alertLinks("") + `}`,
}

// alertLinks appends, to a chat format's text, the alert's console link
// and its subject's (a failing destination's page, a delivery's), each
// through escape when the platform reads markup in a URL.
func alertLinks(escape string) string {
	var b strings.Builder
	for _, link := range []string{"console", "subject_console"} {
		fmt.Fprintf(&b, ` + (has(body.%[1]s) ? " " + %[2]s(body.%[1]s) : "")`, link, escape)
	}
	return b.String()
}

// alertRoutes send alerts to alerts.to: one route per destination, which
// leaves out the alerts about that destination failing (they go to the
// others).
func alertRoutes(cfg config.Config) []config.Route {
	if !alertsOn(cfg) {
		return nil
	}
	var routes []config.Route
	for _, to := range cfg.Alerts.To {
		routes = append(routes, config.Route{Source: alerts.Source, Events: []string{"hookinbox.alert.*"}, To: []string{to},
			Filter:    fmt.Sprintf(`!(body.rule in ["destination_failing", "sends_failed"] && body.subject == %s)`, strconv.Quote(to)),
			Transform: alertTransforms[cfg.Alerts.Transform]})
	}
	return routes
}

// alertRules are the evaluator's rules from the config.
func alertRules(cfg config.Config) alerts.Rules {
	var r alerts.Rules
	for _, rule := range cfg.Alerts.Rules {
		switch {
		case rule.DestinationFailing != nil:
			d := rule.DestinationFailing.For.Std()
			r.DestinationFailing = &d
		case rule.SendsFailed != nil:
			r.SendsFailed = &rule.SendsFailed.Min
		case rule.DeliveriesFailed != nil:
			r.DeliveriesFailed = &rule.DeliveriesFailed.Min
		case rule.SourceSilent != nil:
			r.Silent = append(r.Silent, alerts.Silence{Source: rule.SourceSilent.Source, For: rule.SourceSilent.For.Std()})
		case rule.Backlog != nil:
			r.BacklogOver, r.BacklogFor = &rule.Backlog.Over, rule.Backlog.For.Std()
		case rule.KafkaLag != nil:
			l := alerts.KafkaLag{Source: rule.KafkaLag.Source, Over: rule.KafkaLag.Over, For: rule.KafkaLag.For.Std()}
			if s, ok := cfg.Source(l.Source); ok && s.Kafka != nil {
				l.Stale = 2 * s.Kafka.LagEvery.Std()
			}
			r.KafkaLag = append(r.KafkaLag, l)
		}
	}
	return r
}
