// Package kafka records the messages of Kafka topics in the inbox as
// webhooks are recorded: one transaction inserts a polled batch's rows
// (the inbox's unique constraint decides what is a duplicate) and their
// processing jobs, and the consumer group's offsets move only after that
// transaction commits. A crash between the two gives the messages again,
// and they are then duplicates that create nothing; a database outage
// holds the batch in hand, and no offset moves until it is recorded.
package kafkasource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
)

// Origin is the inbox origin of a delivery read from Kafka.
const Origin = "kafka"

// Defaults of Config.
const (
	DefaultMaxPollRecords = 500
	DefaultDrainTimeout   = 10 * time.Second
)

// Config is one Kafka source.
type Config struct {
	// Source is the source's name: the inbox rows' source.
	Source string
	// KafkaSource is the source's kafka block, as config decoded it and
	// filled its defaults: config.KafkaSource says what each key means.
	// Brokers, Topics and Group are required; an empty DeliveryID or
	// EventType is the offset or the topic, an empty Start latest, a zero
	// SessionTimeout franz-go's own.
	config.KafkaSource
	// RedactHeaders are message headers never stored (names, any case):
	// secrets a producer adds. Authorization, Proxy-Authorization and
	// Cookie are never stored either, as for webhooks.
	RedactHeaders []string
	// MaxPollRecords bounds a batch. Defaults to DefaultMaxPollRecords.
	MaxPollRecords int
	// DrainTimeout bounds the recording and the offset commit of the batch
	// in hand when Run's context ends. Defaults to DefaultDrainTimeout.
	DrainTimeout time.Duration
	// MaxBodyBytes bounds a message's value, as max_body_bytes bounds a
	// webhook's body. A larger message is not stored: it is logged with
	// where it is, reported to Observe as payload_too_large, and its
	// offset moves with its batch's, so that it holds up nothing behind
	// it. Defaults to config.DefaultMaxBodyBytes, as for webhooks.
	MaxBodyBytes int

	// Inbox records the deliveries, in transactions on Pool. The group's
	// lag is stored on Pool too, every LagEvery (table kafka_lag), for the
	// alerts' kafka_lag rule.
	Inbox *ingest.Inbox
	Pool  *pgxpool.Pool
	// Observe, if set, is told each delivery's outcome (accepted,
	// duplicate, conflict, payload_too_large) and how long its batch took
	// to record.
	Observe func(source, outcome string, d time.Duration)
	// ObserveBatch, if set, is told after each committed batch how many
	// of its messages came from each partition.
	ObserveBatch func(source, topic string, partition int32, messages int)
	// ObserveLag, if set, is told every LagEvery each partition's lag as
	// the broker sees it: its high watermark less the group's committed
	// offset. It is asked whether batches flow or not, so it rises while
	// the consumer is stuck (a database outage) and reads 0 once caught
	// up, from the start.
	ObserveLag func(source, topic string, partition int32, lag int64)
	// LagEvery is how often the lag is read, told to ObserveLag and
	// stored. Defaults to config.DefaultKafkaLagEvery (kafka.lag_every).
	LagEvery time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// ClientOptions are added to the franz-go client's (TLS, SASL, tests'
	// timeouts).
	ClientOptions []kgo.Opt
}

// Consumer reads a Kafka source into the inbox.
type Consumer struct {
	cfg      Config
	client   *kgo.Client
	from     from
	redacted map[string]bool // lower-cased
	// uncommitted: a recorded batch's offsets failed to commit, and are
	// tried again.
	uncommitted bool
	// lagUnstored: the last lag reading failed to store (watchLag's
	// goroutine only).
	lagUnstored bool
}

// New checks cfg and makes the consumer's client; Run starts reading.
func New(cfg Config) (*Consumer, error) {
	if cfg.Inbox == nil || cfg.Pool == nil {
		return nil, errors.New("kafka: Inbox and Pool are required")
	}
	if len(cfg.Brokers) == 0 || len(cfg.Topics) == 0 || cfg.Group == "" {
		return nil, errors.New("kafka: Brokers, Topics and Group are required")
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = DefaultMaxPollRecords
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = config.DefaultMaxBodyBytes
	}
	if cfg.LagEvery <= 0 {
		cfg.LagEvery = config.DefaultKafkaLagEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = cfg.Logger.With("source", cfg.Source)
	f, err := parseFrom(cfg.DeliveryID, cfg.EventType)
	if err != nil {
		return nil, err
	}
	start := kgo.NewOffset().AtEnd()
	if cfg.Start == "earliest" {
		start = kgo.NewOffset().AtStart()
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.ConsumeResetOffset(start),
		// Offsets are committed by hand, after the inbox transaction.
		kgo.DisableAutoCommit(),
		// No partition moves away while its batch is being recorded: a
		// rebalance waits until the batch's offsets are committed.
		kgo.BlockRebalanceOnPoll(),
		// The client's warnings and errors (a failed commit, a broker
		// lost) go to the service's log; the group's life (joins, syncs,
		// heartbeats) only at debug (clientLogger), but for one line a
		// session: which partitions this process reads now.
		kgo.WithLogger(newClientLogger(cfg.Logger)),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
			if len(assigned) > 0 {
				cfg.Logger.Info("kafka partitions assigned", "partitions", assigned)
			}
		}),
	}, cfg.ClientOptions...)
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout.Std()), kgo.RebalanceTimeout(cfg.SessionTimeout.Std()))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka source %s: %w", cfg.Source, err)
	}
	redacted := map[string]bool{}
	for _, name := range cfg.RedactHeaders {
		redacted[strings.ToLower(name)] = true
	}
	return &Consumer{cfg: cfg, client: client, from: f, redacted: redacted}, nil
}

// Run reads until ctx ends: each polled batch is recorded in one
// transaction, retried while the database is unreachable, and only then
// are its offsets committed. When ctx ends, the batch in hand is still
// recorded and committed within DrainTimeout, then the consumer leaves
// its group. Run returns nil once it has, and closes the client.
func (c *Consumer) Run(ctx context.Context) error {
	lagCtx, stopLag := context.WithCancel(ctx)
	lagDone := make(chan struct{})
	go func() { defer close(lagDone); c.watchLag(lagCtx) }()
	defer func() { stopLag(); <-lagDone; c.client.Close() }()
	c.cfg.Logger.Info("kafka source reading", "topics", c.cfg.Topics, "group", c.cfg.Group)
	for {
		fetches := c.poll(ctx)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			// Records polled as ctx ended are not recorded, so their
			// offsets are not committed: the group's next reader gets them.
			c.client.AllowRebalance()
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				c.cfg.Logger.Warn("kafka fetch failed", "topic", topic, "partition", partition, "error", err)
			}
		})
		if recs := fetches.Records(); len(recs) > 0 {
			if err := c.recordAndCommit(ctx, recs); err != nil {
				c.client.AllowRebalance()
				return nil // ctx ended during a database outage: nothing committed
			}
			c.observeBatch(fetches)
		} else if c.uncommitted {
			c.commit(ctx)
		}
		c.client.AllowRebalance()
	}
}

// commitRetry is how often offsets a commit failed to move are committed
// again while no new message comes to carry them.
const commitRetry = time.Second

// poll waits for records; while a recorded batch's offsets are not
// committed it returns within commitRetry, so that they are tried again.
func (c *Consumer) poll(ctx context.Context) kgo.Fetches {
	if !c.uncommitted {
		return c.client.PollRecords(ctx, c.cfg.MaxPollRecords)
	}
	pctx, cancel := context.WithTimeout(ctx, commitRetry)
	defer cancel()
	return c.client.PollRecords(pctx, c.cfg.MaxPollRecords)
}

// commit commits the offsets of every record polled so far, all of them
// recorded: a batch is recorded before the next poll. So a commit a
// rebalance failed is made good by the next one, or by the retry while no
// message comes; until then the group would give those messages again.
func (c *Consumer) commit(ctx context.Context) {
	commitCtx, cancel := c.detached(ctx)
	defer cancel()
	if err := c.client.CommitUncommittedOffsets(commitCtx); err != nil {
		if !c.uncommitted {
			c.cfg.Logger.Warn("kafka offsets not committed; trying again", "error", err)
		}
		c.uncommitted = true
		return
	}
	if c.uncommitted {
		c.cfg.Logger.Info("kafka offsets committed after a failed commit")
	}
	c.uncommitted = false
}

// observeBatch reports each partition's messages.
func (c *Consumer) observeBatch(fetches kgo.Fetches) {
	if c.cfg.ObserveBatch == nil {
		return
	}
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if n := len(p.Records); n > 0 {
			c.cfg.ObserveBatch(c.cfg.Source, p.Topic, p.Partition, n)
		}
	})
}

// recordAndCommit records recs until it succeeds, then commits their
// offsets. It gives up, committing nothing, only if ctx ends between two
// attempts. A message over MaxBodyBytes is left out, and told once its
// batch is stored.
func (c *Consumer) recordAndCommit(ctx context.Context, recs []*kgo.Record) error {
	ds := make([]ingest.Delivery, 0, len(recs))
	var tooLarge []*kgo.Record
	for _, r := range recs {
		if len(r.Value) > c.cfg.MaxBodyBytes {
			tooLarge = append(tooLarge, r)
			continue
		}
		ds = append(ds, c.delivery(r))
	}
	delay := 500 * time.Millisecond
	for {
		err := c.record(ctx, ds)
		if err == nil {
			break
		}
		c.cfg.Logger.Warn("kafka batch not recorded; no offset moves until it is", "records", len(recs), "error", err,
			"retry_in", delay.String())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 15*time.Second)
	}
	c.skipped(tooLarge)
	c.commit(ctx)
	return nil
}

// skipped tells of the messages left out of a stored batch as too large:
// the log says where each is, for an operator to read it from the topic
// while the topic keeps it.
func (c *Consumer) skipped(tooLarge []*kgo.Record) {
	for _, r := range tooLarge {
		c.cfg.Logger.Warn("kafka message over max_body_bytes not stored; its offset moves with its batch's",
			"topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "bytes", len(r.Value), "max_body_bytes", c.cfg.MaxBodyBytes)
		if c.cfg.Observe != nil {
			c.cfg.Observe(c.cfg.Source, ingest.CodePayloadTooLarge, 0)
		}
	}
}

// detached is a context that outlives ctx by DrainTimeout at most, so a
// batch begun before shutdown is recorded and committed.
func (c *Consumer) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), c.cfg.DrainTimeout)
}

// record inserts ds and their jobs in one transaction, then records the
// conflicts it found (a delivery id already stored with another payload)
// for an operator to compare.
func (c *Consumer) record(ctx context.Context, ds []ingest.Delivery) error {
	if len(ds) == 0 {
		return nil // every message was too large
	}
	start := time.Now()
	rctx, cancel := c.detached(ctx)
	defer cancel()
	tx, err := c.cfg.Pool.Begin(rctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(rctx)) //nolint:errcheck // a no-op after Commit
	recs, errs, err := c.cfg.Inbox.RecordManyTx(rctx, tx, ds)
	if err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil && !errors.Is(err, ingest.ErrDeliveryConflict) {
			return fmt.Errorf("delivery %q: %w", ds[i].DeliveryID, err)
		}
	}
	if err := tx.Commit(rctx); err != nil {
		return err
	}
	took := time.Since(start)
	for i, err := range errs {
		outcome := string(recs[i].Outcome)
		if err != nil {
			outcome = "conflict"
			c.cfg.Logger.Warn("kafka message conflicts with a stored delivery of the same id", "delivery_id", ds[i].DeliveryID,
				"topic", ds[i].Headers.Get(HeaderTopic), "offset", ds[i].Headers.Get(HeaderOffset))
			if cerr := c.cfg.Inbox.RecordConflict(rctx, ds[i], recs[i].ID); cerr != nil {
				c.cfg.Logger.Warn("conflict not recorded", "delivery_id", ds[i].DeliveryID, "error", cerr)
			}
		}
		if c.cfg.Observe != nil {
			c.cfg.Observe(c.cfg.Source, outcome, took)
		}
	}
	return nil
}
