package kafkasource

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/ingest"
)

// Headers a delivery read from Kafka carries besides the message's own:
// where it was read, shown with it in the admin API, the console and the
// CLI.
const (
	HeaderTopic     = "Kafka-Topic"
	HeaderPartition = "Kafka-Partition"
	HeaderOffset    = "Kafka-Offset"
	HeaderKey       = "Kafka-Key"
)

// maxNameBytes bounds a delivery id or event type taken from a message:
// a longer one is not a name a producer meant, and the inbox's indexes
// refuse very long keys.
const maxNameBytes = 200

// from says where a message's delivery id and event type are.
type from struct {
	idHeader, typeHeader string // "" unless header:NAME
	idFromKey            bool
}

func parseFrom(deliveryID, eventType string) (from, error) {
	var f from
	switch {
	case deliveryID == "" || deliveryID == "offset":
	case deliveryID == "key":
		f.idFromKey = true
	case strings.HasPrefix(deliveryID, "header:") && len(deliveryID) > len("header:"):
		f.idHeader = strings.TrimPrefix(deliveryID, "header:")
	default:
		return f, fmt.Errorf("kafka: delivery id %q: want header:NAME, key or offset", deliveryID)
	}
	switch {
	case eventType == "" || eventType == "topic":
	case strings.HasPrefix(eventType, "header:") && len(eventType) > len("header:"):
		f.typeHeader = strings.TrimPrefix(eventType, "header:")
	default:
		return f, fmt.Errorf("kafka: event type %q: want header:NAME or topic", eventType)
	}
	return f, nil
}

// delivery is the inbox delivery of r. A delivery id or event type the
// message does not carry, or carries as something that cannot be a name
// (over 200 bytes, not UTF-8, control characters), falls back to the
// message's offset or topic with a warning: a message that could never be
// stored would stop its partition for good.
func (c *Consumer) delivery(r *kgo.Record) ingest.Delivery {
	offsetID := fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
	id := offsetID
	switch {
	case c.from.idFromKey:
		if v, ok := c.name(r, "key", string(r.Key), offsetID); ok {
			id = producerID(v)
		}
	case c.from.idHeader != "":
		v, _ := header(r, c.from.idHeader)
		if v, ok := c.name(r, "delivery id header "+c.from.idHeader, v, offsetID); ok {
			id = producerID(v)
		}
	}
	eventType := r.Topic
	if c.from.typeHeader != "" {
		v, _ := header(r, c.from.typeHeader)
		eventType, _ = c.name(r, "event type header "+c.from.typeHeader, v, r.Topic)
	}
	payload := r.Value
	if payload == nil {
		payload = []byte{} // a tombstone
	}
	return ingest.Delivery{Source: c.cfg.Source, DeliveryID: id, EventType: eventType, OccurredAt: r.Timestamp,
		Headers: headers(r, c.redacted), Payload: payload, Origin: Origin}
}

// name returns v, true if it can be a delivery id or event type, else
// fallback, false.
func (c *Consumer) name(r *kgo.Record, what, v, fallback string) (string, bool) {
	if v != "" && len(v) <= maxNameBytes && utf8.ValidString(v) && strings.IndexFunc(v, unicode.IsControl) < 0 {
		return v, true
	}
	c.cfg.Logger.Warn("kafka message has no usable "+what+"; using "+fallback,
		"topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "length", len(v))
	return fallback, false
}

// offsetShaped is what an offset id looks like: a topic name (a-z, A-Z,
// 0-9, '.', '_', '-'), a partition and an offset.
var offsetShaped = regexp.MustCompile(`^[a-zA-Z0-9._-]+/[0-9]+/[0-9]+$`)

// producerID is the delivery id of a header or key id v. Offset ids
// (the fallback of a message without a usable one) and producers' ids
// share the source's namespace, so a producer's id never takes an offset
// id's shape: one that has it, or that begins with "~", is stored with a
// "~" in front. A producer sending "orders/0/7" would otherwise pre-empt
// the message at that offset, which would become a conflict, never
// processed; and "~" keeps the mapping one to one, as a topic name holds
// no "~".
func producerID(v string) string {
	if offsetShaped.MatchString(v) || strings.HasPrefix(v, "~") {
		return "~" + v
	}
	return v
}

// header returns the value of the message's first header named name,
// matched exactly, else case-insensitively.
func header(r *kgo.Record, name string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == name {
			return string(h.Value), true
		}
	}
	for _, h := range r.Headers {
		if strings.EqualFold(h.Key, name) {
			return string(h.Value), true
		}
	}
	return "", false
}

// headers are the message's headers, but the redacted ones (matched in
// any case), and where it was read. Names keep the case the producer
// sent: Kafka's header names are bytes, not HTTP's case-insensitive
// tokens, and an operator reading a stored delivery should see what was
// sent. Handlers still get canonical names (jobs loads them so), and a
// route's headers map is lower-cased. A value that is not text (not
// UTF-8, or holding NUL, which a JSON column refuses) is kept in base64,
// prefixed "base64:".
func headers(r *kgo.Record, redacted map[string]bool) http.Header {
	h := http.Header{}
	for _, kh := range r.Headers {
		if redacted[strings.ToLower(kh.Key)] {
			continue
		}
		if kh.Key != "" && utf8.ValidString(kh.Key) && !strings.ContainsRune(kh.Key, 0) {
			h[kh.Key] = append(h[kh.Key], text(kh.Value))
		}
	}
	h.Set(HeaderTopic, r.Topic)
	h.Set(HeaderPartition, strconv.Itoa(int(r.Partition)))
	h.Set(HeaderOffset, strconv.FormatInt(r.Offset, 10))
	if r.Key != nil {
		h.Set(HeaderKey, text(r.Key))
	}
	return h
}

func text(b []byte) string {
	if utf8.Valid(b) && !strings.ContainsRune(string(b), 0) {
		return string(b)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b)
}
