package destination

import (
	"context"
	"errors"
	"strings"
)

// Kafka is a destination that publishes to a Kafka topic instead of
// posting to a URL.
type Kafka struct {
	// Brokers are the seed brokers, host:port. Required.
	Brokers []string
	// Topic is the topic each message goes to; "{source}" and "{event}"
	// in it are replaced by the delivery's source and event type (a
	// character a topic name cannot hold becomes "_"). Required.
	Topic string
	// Key is each message's key: "resource" (the default; one resource's
	// events land in one partition, in order) or "delivery" (the delivery
	// id).
	Key string
}

// NATS is a destination that publishes to a NATS JetStream subject.
type NATS struct {
	// URL is the server's, nats://host:port. Required.
	URL string
	// Subject is each message's subject, with "{source}" and "{event}"
	// replaced as Kafka.Topic's are (a character a subject token cannot
	// hold becomes "_"). A stream must capture it: a subject no stream
	// takes is a failed attempt, never a plain NATS publish that nobody
	// keeps. Required.
	Subject string
}

// brokerMessage is one send as a broker message: the delivery's body, its
// key as webhook-id, and where it came from.
type brokerMessage struct {
	target  string // topic or subject
	key     []byte // Kafka's partitioning key
	id      string // the send's key: webhook-id, and NATS's Nats-Msg-Id
	body    []byte
	headers [][2]string
}

// publisher sends messages to one broker destination. publish returns
// where the message landed, once the broker has it.
type publisher interface {
	publish(ctx context.Context, m brokerMessage) (string, error)
	close()
}

// errBrokerRefused wraps a broker's refusal of a message.
var errBrokerRefused = errors.New("broker refused the message")

// brokerMessageFor is the message of send for a destination whose target
// template is target.
func brokerMessageFor(send *loadedSend, target string, keyByDelivery bool, contentType string, valid func(rune) bool) brokerMessage {
	key := []byte(send.DeliveryID)
	if !keyByDelivery && send.ResourceKey != nil && *send.ResourceKey != "" {
		key = []byte(*send.ResourceKey)
	}
	h := [][2]string{
		{"webhook-id", send.Key},
		{"Content-Type", contentType},
		{"Hookinbox-Source", send.Source},
		{"Hookinbox-Event", send.EventType},
		{"Hookinbox-Delivery-Id", send.DeliveryID},
	}
	if send.stale {
		h = append(h, [2]string{"Hookinbox-Stale", "true"})
	}
	r := strings.NewReplacer("{source}", sanitize(send.Source, valid), "{event}", sanitize(send.EventType, valid))
	return brokerMessage{target: r.Replace(target), key: key, id: send.Key, body: send.Payload, headers: h}
}

// sanitize replaces each character valid refuses with "_".
func sanitize(s string, valid func(rune) bool) string {
	return strings.Map(func(r rune) rune {
		if valid(r) {
			return r
		}
		return '_'
	}, s)
}

// kafkaTopicRune is a character a Kafka topic name may hold.
func kafkaTopicRune(r rune) bool {
	return r == '.' || r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
}

// natsSubjectRune is a character a NATS subject token may hold (a "." in
// an event type makes more tokens, as NATS subjects are meant to).
func natsSubjectRune(r rune) bool {
	return r > ' ' && r != '*' && r != '>' && r < 0x7f
}
