package kafkasource

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// watchLag tells ObserveLag each partition's lag every LagEvery until ctx
// ends. The lag is the broker's: the high watermark less the group's
// committed offset (kadm's Lag), so it needs no batch to move, and says
// what an operator alerts on when the consumer is stuck.
func (c *Consumer) watchLag(ctx context.Context) {
	if c.cfg.ObserveLag == nil {
		return
	}
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
	for _, l := range lags[c.cfg.Group].Lag.Sorted() {
		if topics[l.Topic] && l.Err == nil && l.Lag >= 0 {
			c.cfg.ObserveLag(c.cfg.Source, l.Topic, l.Partition, l.Lag)
		}
	}
}
