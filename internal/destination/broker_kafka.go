package destination

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/internal/config"
)

// kafkaPublisher produces with franz-go: idempotent, acks from every
// in-sync replica, so a send is recorded succeeded only once the broker
// has it durably; a retry of a send the broker took is a second message
// with the same webhook-id, which consumers drop.
type kafkaPublisher struct{ client *kgo.Client }

func newKafkaPublisher(k *config.KafkaDestination) (*kafkaPublisher, error) {
	client, err := kgo.NewClient(
		kgo.SeedBrokers(k.Brokers...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Each send is one message; the attempt's timeout bounds it.
		kgo.ProducerLinger(0),
	)
	if err != nil {
		return nil, err
	}
	return &kafkaPublisher{client: client}, nil
}

func (p *kafkaPublisher) publish(ctx context.Context, m brokerMessage) (string, error) {
	r := &kgo.Record{Topic: m.target, Key: m.key, Value: m.body}
	for _, h := range m.headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
	}
	got, err := p.client.ProduceSync(ctx, r).First()
	if err != nil {
		return "", fmt.Errorf("kafka topic %s: %w", m.target, err)
	}
	return fmt.Sprintf("kafka topic %s partition %d offset %d", got.Topic, got.Partition, got.Offset), nil
}

func (p *kafkaPublisher) close() { p.client.Close() }
