package config

import (
	"fmt"
	"strings"
	"time"
)

// ProviderKafka is the provider of a source that reads Kafka topics:
// handlers for its events register with Provider "kafka".
const ProviderKafka = "kafka"

// KafkaSource reads a source's deliveries from Kafka topics instead of
// webhooks. A polled batch is recorded as a webhook batch is, and the
// group's offsets move only after its transaction commits. The consumer
// (internal/kafkasource) reads with this very type.
type KafkaSource struct {
	// Brokers are the seed brokers, host:port. Required.
	Brokers []string `yaml:"brokers"`
	// Topics are read. Required.
	Topics []string `yaml:"topics"`
	// Group is the consumer group: processes reading the same source
	// share its partitions. Defaults to "hookinbox-<source name>".
	Group string `yaml:"group"`
	// DeliveryID is where a message's delivery id is: "header:NAME" (a
	// header the producer sets, such as an event id: the same event
	// produced twice is one delivery), "key" (the message key), or
	// "offset" (topic/partition/offset: only the broker's redeliveries are
	// duplicates). Defaults to offset. A message without the named header
	// or key is recorded under its offset, with a warning; a header or key
	// id shaped as an offset id, or beginning with "~", is stored with a
	// "~" in front, so that no producer takes another message's offset id.
	DeliveryID string `yaml:"delivery_id"`
	// EventType is where a message's event type is: "header:NAME" or
	// "topic". Defaults to topic; a message without the header takes its
	// topic.
	EventType string `yaml:"event_type"`
	// Start is where a group with no committed offset starts: "earliest"
	// or "latest". Defaults to latest.
	Start string `yaml:"start"`
	// SessionTimeout is how long the group waits for a process that
	// stopped answering (killed, partitioned) before it gives that
	// process's partitions to the others, and how long a rebalance waits
	// for a member to rejoin: their messages wait that long. Within the
	// broker's group.min/max.session.timeout.ms (Kafka's: 6s to 30m).
	// Defaults to 45s.
	SessionTimeout Duration `yaml:"session_timeout"`
	// LagEvery is how often the group's lag is read from the broker, for
	// hookinbox_kafka_lag and the kafka_lag alert rule, whether messages
	// flow or not. 1s to 5m; defaults to 15s.
	LagEvery Duration `yaml:"lag_every"`
}

// DefaultKafkaSessionTimeout is kafka.session_timeout's default, Kafka
// clients' own.
const DefaultKafkaSessionTimeout = 45 * time.Second

// DefaultKafkaLagEvery is kafka.lag_every's default.
const DefaultKafkaLagEvery = 15 * time.Second

// kafkaDefaults fills a Kafka source's defaults.
func (s *Source) kafkaDefaults() {
	k := s.Kafka
	if s.Provider == "" {
		s.Provider = ProviderKafka
	}
	if k.Group == "" {
		k.Group = "hookinbox-" + s.Name
	}
	if k.DeliveryID == "" {
		k.DeliveryID = "offset"
	}
	if k.EventType == "" {
		k.EventType = "topic"
	}
	if k.Start == "" {
		k.Start = "latest"
	}
	if k.SessionTimeout == 0 {
		k.SessionTimeout = Duration(DefaultKafkaSessionTimeout)
	}
	if k.LagEvery == 0 {
		k.LagEvery = Duration(DefaultKafkaLagEvery)
	}
}

// validateKafka checks a Kafka source; key names it in errors.
func (s Source) validateKafka(key string) error {
	k := s.Kafka
	switch {
	case s.Provider != ProviderKafka:
		return fmt.Errorf("%s.provider: a source with a kafka block is provider kafka (or leaves provider out), not %q", key, s.Provider)
	case len(s.Secrets) > 0:
		return fmt.Errorf("%s.secrets: a kafka source verifies no signature; the broker's own authentication guards the topic", key)
	case s.HMAC != nil || s.PayPal != nil || s.GitHub != nil || s.Stripe != nil || s.NotificationURL != "":
		return fmt.Errorf("%s: a kafka source takes none of hmac, paypal, github, stripe or notification_url", key)
	case len(k.Brokers) == 0:
		return fmt.Errorf("%s.kafka.brokers: at least one host:port", key)
	case len(k.Topics) == 0:
		return fmt.Errorf("%s.kafka.topics: at least one topic", key)
	}
	for i, b := range k.Brokers {
		if err := checkListen(b); err != nil || strings.HasPrefix(b, ":") {
			return fmt.Errorf("%s.kafka.brokers[%d]: %q is not host:port", key, i, b)
		}
	}
	for i, t := range k.Topics {
		if t == "" {
			return fmt.Errorf("%s.kafka.topics[%d]: empty", key, i)
		}
	}
	if err := checkFrom(k.DeliveryID, "key", "offset"); err != nil {
		return fmt.Errorf("%s.kafka.delivery_id: %w", key, err)
	}
	if err := checkFrom(k.EventType, "topic"); err != nil {
		return fmt.Errorf("%s.kafka.event_type: %w", key, err)
	}
	if k.Start != "earliest" && k.Start != "latest" {
		return fmt.Errorf("%s.kafka.start: %q (want earliest or latest)", key, k.Start)
	}
	if t := k.SessionTimeout.Std(); t < time.Second || t > 30*time.Minute {
		return fmt.Errorf("%s.kafka.session_timeout: %s (want 1s to 30m, within the broker's group session limits)", key, t)
	}
	if t := k.LagEvery.Std(); t < time.Second || t > 5*time.Minute {
		return fmt.Errorf("%s.kafka.lag_every: %s (want 1s to 5m)", key, t)
	}
	return nil
}

// checkFrom accepts "header:NAME" or one of words.
func checkFrom(v string, words ...string) error {
	if name, ok := strings.CutPrefix(v, "header:"); ok {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") {
			return fmt.Errorf("%q: the header name is empty or not a name", v)
		}
		return nil
	}
	for _, w := range words {
		if v == w {
			return nil
		}
	}
	return fmt.Errorf("%q (want header:NAME or %s)", v, strings.Join(words, " or "))
}
