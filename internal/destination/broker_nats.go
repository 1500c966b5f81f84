package destination

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hookinbox/hookinbox/internal/config"
)

// natsPublisher publishes to JetStream with Nats-Msg-Id set to the send's
// key, so the stream itself drops a repeat inside its duplicate window.
type natsPublisher struct {
	conn *nats.Conn
	js   jetstream.JetStream
}

func newNATSPublisher(n *config.NATSDestination) (*natsPublisher, error) {
	// The connection retries on its own; a server down at startup is a
	// failed attempt later, not a failed start.
	conn, err := nats.Connect(n.URL, nats.Name("hookinbox"), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &natsPublisher{conn: conn, js: js}, nil
}

func (p *natsPublisher) publish(ctx context.Context, m brokerMessage) (string, error) {
	msg := nats.NewMsg(m.target)
	msg.Data = m.body
	for _, h := range m.headers {
		msg.Header.Set(h[0], h[1])
	}
	// No retry here: a failed attempt is retried on the destination's schedule.
	ack, err := p.js.PublishMsg(ctx, msg, jetstream.WithMsgID(m.id), jetstream.WithRetryAttempts(0))
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
		return "", fmt.Errorf("nats subject %s: no JetStream stream takes this subject; add it to a stream's subjects: %w", m.target, err)
	}
	if err != nil {
		return "", fmt.Errorf("nats subject %s: %w", m.target, err)
	}
	where := fmt.Sprintf("nats stream %s sequence %d", ack.Stream, ack.Sequence)
	if ack.Duplicate {
		where += " (a repeat the stream dropped)"
	}
	return where, nil
}

func (p *natsPublisher) close() { p.conn.Close() }
