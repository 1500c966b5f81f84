package kafkasource

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/lag_store.sql
var lagStoreSQL string

// watchLag reads the group's lag every LagEvery until ctx ends, tells
// ObserveLag each partition's, and stores the reading for the alerts'
// kafka_lag rule. The lag is the broker's: the high watermark less the
// group's committed offset (kadm's Lag), so it needs no batch to move, and
// says what an operator alerts on when the consumer is stuck.
func (c *Consumer) watchLag(ctx context.Context) {
	adm := kadm.NewClient(c.client)
	tick := time.NewTicker(c.cfg.LagEvery)
	defer tick.Stop()
	for {
		c.observeLag(ctx, adm)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// lagReading is one reading of a source's lag: one entry per partition of
// its topics that the group reads or has committed.
type lagReading struct {
	topics     []string
	partitions []int32
	lags       []int64
}

func (c *Consumer) observeLag(ctx context.Context, adm *kadm.Client) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.LagEvery)
	defer cancel()
	lags, err := adm.Lag(ctx, c.cfg.Group)
	if err == nil {
		err = lags.Error()
	}
	if err != nil {
		if ctx.Err() == nil {
			c.cfg.Logger.Debug("kafka lag not read", "error", err)
		}
		return
	}
	topics := make(map[string]bool, len(c.cfg.Topics))
	for _, t := range c.cfg.Topics {
		topics[t] = true
	}
	var r lagReading
	whole := true
	for _, l := range lags[c.cfg.Group].Lag.Sorted() {
		if !topics[l.Topic] {
			continue
		}
		if l.Err != nil {
			whole = false
			continue
		}
		lag := l.Lag
		if l.Commit.At < 0 && c.cfg.Start != "earliest" {
			// Never committed, the partition is read from its end on:
			// what is before that will not be read, so it is no lag
			// (kadm counts it from the partition's start).
			lag = 0
		}
		r.topics, r.partitions, r.lags = append(r.topics, l.Topic), append(r.partitions, l.Partition), append(r.lags, lag)
		if c.cfg.ObserveLag != nil {
			c.cfg.ObserveLag(c.cfg.Source, l.Topic, l.Partition, lag)
		}
	}
	// A reading with a partition unread, or with none (a group that has
	// neither committed nor been given a partition of the topics: new, or
	// rebalancing), would sum to less than the lag there is: the last
	// whole reading stays instead, and its age shows.
	if !whole || len(r.lags) == 0 {
		c.cfg.Logger.Debug("kafka lag not stored: not every partition's lag was read")
		return
	}
	c.storeLag(ctx, r)
}

// storeLag stores r, warning once when storing starts failing and telling
// when it works again.
func (c *Consumer) storeLag(ctx context.Context, r lagReading) {
	err := storeLag(ctx, c.cfg.Pool, c.cfg.Source, r)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping, or the reading outlived its period: the next one
		// stores.
	case err != nil && !c.lagUnstored:
		c.lagUnstored = true
		c.cfg.Logger.Warn("kafka lag not stored; the kafka_lag alert reads the last reading stored", "error", err)
	case err == nil && c.lagUnstored:
		c.lagUnstored = false
		c.cfg.Logger.Info("kafka lag stored again")
	}
}

// storeLag replaces source's stored lag with r, in one statement: one
// round trip a reading.
func storeLag(ctx context.Context, pool *pgxpool.Pool, source string, r lagReading) error {
	_, err := pool.Exec(ctx, lagStoreSQL, pgnamed.Args{"source": source, "topics": r.topics, "partitions": r.partitions,
		"lags": r.lags})
	return err
}
