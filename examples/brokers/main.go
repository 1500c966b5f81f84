// Command brokers runs a Kafka and a NATS server on this machine for
// trying hookinbox's broker sources and destinations (docs/brokers.md),
// and produces and reads their messages. The Kafka is franz-go's kfake, a
// Kafka-protocol cluster in one process; the NATS is nats-server itself,
// with JetStream. Neither keeps anything once stopped: for development
// and tests, not production.
//
//	go run ./examples/brokers                 # Kafka on 127.0.0.1:9092, NATS on 127.0.0.1:4222
//	go run ./examples/brokers produce [--event-id ID] [--type TYPE] [--topic T] BODY
//	go run ./examples/brokers consume [--topic T] [--subject S] [--for 3s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	kafkaAddr = "127.0.0.1:9092"
	kafkaPort = 9092
	natsURL   = "nats://127.0.0.1:4222"
	natsPort  = 4222
	// Topics the tour uses: the source reads the first, a destination
	// writes the second.
	sourceTopic      = "orders.confirmed"
	destinationTopic = "hookinbox.orders"
	// stream takes every subject under hookinbox.
	stream = "HOOKINBOX"
)

func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "produce":
		err = produce(os.Args[2:])
	case len(os.Args) > 1 && os.Args[1] == "consume":
		err = consume(os.Args[2:])
	case len(os.Args) == 1:
		err = serve()
	default:
		err = fmt.Errorf("unknown command %q: want no argument (serve), produce or consume", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "brokers:", err)
		os.Exit(1)
	}
}

// serve runs both servers until interrupted.
func serve() error {
	cluster, err := kfake.NewCluster(kfake.Ports(kafkaPort), kfake.SeedTopics(3, sourceTopic, destinationTopic))
	if err != nil {
		return fmt.Errorf("kafka on %s: %w", kafkaAddr, err)
	}
	defer cluster.Close()
	dir, err := os.MkdirTemp("", "brokers-nats-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsPort, JetStream: true, StoreDir: dir, NoSigs: true})
	if err != nil {
		return err
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		return fmt.Errorf("nats on %s did not start", natsURL)
	}
	if err := createStream(); err != nil {
		return err
	}
	fmt.Printf("kafka listening on %s (topics %s, %s); nats listening on %s (stream %s takes hookinbox.>)\n",
		kafkaAddr, sourceTopic, destinationTopic, natsURL, stream)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// jetStream connects to the NATS server's JetStream; close the connection
// when done.
func jetStream() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(natsURL)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

func createStream() error {
	nc, js, err := jetStream()
	if err != nil {
		return err
	}
	defer nc.Close()
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{Name: stream, Subjects: []string{"hookinbox.>"},
		Duplicates: 10 * time.Minute})
	return err
}

// produce writes one message to a topic, with event_id and type headers.
func produce(args []string) error {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	topic := fs.String("topic", sourceTopic, "topic")
	id := fs.String("event-id", "", "the event_id header (none: left out)")
	eventType := fs.String("type", "order.confirmed", "the type header")
	key := fs.String("key", "", "the message key")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return errors.New("produce takes one argument, the message body")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
	if err != nil {
		return err
	}
	defer cl.Close()
	r := &kgo.Record{Topic: *topic, Value: []byte(fs.Arg(0)), Headers: []kgo.RecordHeader{{Key: "type", Value: []byte(*eventType)}}}
	if *key != "" {
		r.Key = []byte(*key)
	}
	if *id != "" {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "event_id", Value: []byte(*id)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := cl.ProduceSync(ctx, r).First()
	if err != nil {
		return err
	}
	fmt.Printf("produced %s partition %d offset %d\n", got.Topic, got.Partition, got.Offset)
	return nil
}

// consume prints what a topic and the stream hold, for a while.
func consume(args []string) error {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	topic := fs.String("topic", destinationTopic, "Kafka topic to read from its start (empty: none)")
	subject := fs.String("subject", "hookinbox.>", "NATS subjects to read from the stream's start (empty: none)")
	wait := fs.Duration("for", 2*time.Second, "how long to read each")
	_ = fs.Parse(args)
	if *topic != "" {
		ctx, cancel := context.WithTimeout(context.Background(), *wait)
		defer cancel()
		if err := consumeKafka(ctx, *topic); err != nil {
			return err
		}
	}
	if *subject != "" {
		ctx, cancel := context.WithTimeout(context.Background(), *wait)
		defer cancel()
		return consumeNATS(ctx, *subject)
	}
	return nil
}

func consumeKafka(ctx context.Context, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			fmt.Printf("kafka %s key=%s webhook-id=%s %s\n", r.Topic, printable(r.Key), printable([]byte(header(r, "webhook-id"))), printable(r.Value))
		})
	}
	return nil
}

func consumeNATS(ctx context.Context, subject string) error {
	nc, js, err := jetStream()
	if err != nil {
		return err
	}
	defer nc.Close()
	c, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return err
	}
	for {
		msg, err := c.Next(jetstream.FetchContext(ctx))
		if err != nil {
			return nil // the time is up
		}
		fmt.Printf("nats %s webhook-id=%s %s\n", printable([]byte(msg.Subject())), printable([]byte(msg.Headers().Get("webhook-id"))), printable(msg.Data()))
	}
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// printable is b for a terminal: as it is when it is valid UTF-8 without
// control characters, else quoted with them escaped. A message's body is a
// provider's, and an escape sequence in it must not drive the terminal.
func printable(b []byte) string {
	s := string(b)
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.QuoteToGraphic(s)
}
