package destination

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
)

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

// validateBroker checks a broker destination's settings.
func validateBroker(d config.Destination) error {
	switch {
	case d.Kafka != nil && d.NATS != nil:
		return errors.New("kafka, nats: a destination is one broker's")
	case d.URL != "" || d.TLS.CAFile != "" || d.Secret != "" || len(d.Headers) > 0:
		return errors.New("url, tls, secret and headers are an HTTP destination's; a broker destination takes none")
	case d.Kafka != nil:
		k := d.Kafka
		if len(k.Brokers) == 0 {
			return errors.New("kafka.brokers: at least one host:port")
		}
		for i, b := range k.Brokers {
			if host, port, err := net.SplitHostPort(b); err != nil || host == "" || port == "" {
				return fmt.Errorf("kafka.brokers[%d]: %q is not host:port", i, b)
			}
		}
		if k.Topic == "" {
			return errors.New("kafka.topic: required")
		}
		if sanitize(strings.NewReplacer("{source}", "", "{event}", "").Replace(k.Topic), kafkaTopicRune) !=
			strings.NewReplacer("{source}", "", "{event}", "").Replace(k.Topic) {
			return fmt.Errorf("kafka.topic: %q: a topic name holds a-z, A-Z, 0-9, '.', '_' and '-' only", k.Topic)
		}
		if k.Key != "" && k.Key != "resource" && k.Key != "delivery" {
			return fmt.Errorf("kafka.key: %q (want resource or delivery)", k.Key)
		}
	default:
		n := d.NATS
		u, err := url.Parse(n.URL)
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
			return fmt.Errorf("nats.url: %q is not a nats:// or tls:// URL", outbound.MaskURL(n.URL))
		}
		if n.Subject == "" || strings.HasPrefix(n.Subject, ".") || strings.HasSuffix(n.Subject, ".") || strings.Contains(n.Subject, "..") {
			return fmt.Errorf("nats.subject: %q is not a subject (tokens separated by '.')", n.Subject)
		}
		if sanitize(n.Subject, natsSubjectRune) != n.Subject {
			return fmt.Errorf("nats.subject: %q: no spaces, '*' or '>' (hookinbox publishes to one subject)", n.Subject)
		}
	}
	return nil
}

// brokerFor is a dest's broker connection, made on first use (a process
// that never sends never connects) and closed by Stop.
type brokerFor struct {
	mu  sync.Mutex
	pub publisher
}

// get returns d's publisher, connecting it the first time.
func (b *brokerFor) get(d *config.Destination) (publisher, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pub != nil {
		return b.pub, nil
	}
	var err error
	if d.Kafka != nil {
		b.pub, err = newKafkaPublisher(d.Kafka)
	} else {
		b.pub, err = newNATSPublisher(d.NATS)
	}
	return b.pub, err
}

// close closes the publisher if one was made.
func (b *brokerFor) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pub != nil {
		b.pub.close()
		b.pub = nil
	}
}

// publish makes one broker send: the attempt succeeds once the broker has
// the message.
func (s *Service) publish(ctx context.Context, d *dest, send *loadedSend, contentType string) response {
	res := response{at: time.Now(), stale: send.stale, probe: send.probe}
	pub, err := d.broker.get(&d.Destination)
	if err != nil {
		res.err = err
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, d.Timeout.Std())
	defer cancel()
	var m brokerMessage
	if d.Kafka != nil {
		m = brokerMessageFor(send, d.Kafka.Topic, d.Kafka.Key == "delivery", contentType, kafkaTopicRune)
	} else {
		m = brokerMessageFor(send, d.NATS.Subject, true, contentType, natsSubjectRune)
	}
	if tp := traceParentOf(ctx); tp != nil {
		m.headers = append(m.headers, [2]string{"traceparent", *tp})
	}
	res.body, res.err = pub.publish(ctx, m)
	res.took = time.Since(res.at)
	res.published = res.err == nil
	return res
}

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
