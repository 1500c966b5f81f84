package cli

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/kafkasource"
	"github.com/hookinbox/hookinbox/internal/metrics"
)

// kafkaConsumers builds a consumer for each Kafka source; observe is told
// each delivery's outcome, as ingest's Observe is.
func kafkaConsumers(cfg config.Config, pool *pgxpool.Pool, inbox *ingest.Inbox, m *metrics.Metrics,
	observe func(source, outcome string, d time.Duration), logger *slog.Logger) ([]*kafkasource.Consumer, error) {
	var out []*kafkasource.Consumer
	for _, s := range cfg.Sources {
		if s.Kafka == nil {
			continue
		}
		c, err := kafkasource.New(kafkasource.Config{Source: s.Name, KafkaSource: *s.Kafka,
			LagEvery: s.Kafka.LagEvery.Std(), RedactHeaders: s.RedactHeaders, MaxBodyBytes: cfg.MaxBodyBytes,
			Inbox: inbox, Pool: pool, Observe: observe, ObserveBatch: m.ObserveKafkaBatch, ObserveLag: m.ObserveKafkaLag, Logger: logger})
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// consumers runs the Kafka sources' consumers from Start until Stop.
type consumers struct {
	list   []*kafkasource.Consumer
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// start runs each consumer until stop. Called once the schema is known to
// be this binary's, so every batch can be recorded.
func (cs *consumers) start(ctx context.Context) {
	if len(cs.list) == 0 {
		return
	}
	ctx, cs.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, c := range cs.list {
		cs.wg.Add(1)
		go func() {
			defer cs.wg.Done()
			_ = c.Run(ctx) // returns nil once stopped
		}()
	}
}

// stop ends every consumer: each records and commits the batch in hand,
// within its drain timeout, and leaves its group.
func (cs *consumers) stop() {
	if cs.cancel != nil {
		cs.cancel()
	}
	cs.wg.Wait()
}
