package jobs

import (
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// ClientConfig configures the River client hookinbox runs.
type ClientConfig struct {
	// InsertOnly builds a client that enqueues but works nothing (an
	// ingest-only process). Defaults to false.
	InsertOnly bool

	// MaxWorkers is how many deliveries one process works at once.
	// Defaults to 50.
	MaxWorkers int

	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

func (c ClientConfig) WithDefaults() ClientConfig {
	if c.MaxWorkers == 0 {
		c.MaxWorkers = 50
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// NewClient builds the River client with every hookinbox worker registered.
func NewClient(pool *pgxpool.Pool, cfg ClientConfig) (*river.Client[pgx.Tx], error) {
	cfg = cfg.WithDefaults()
	rc := &river.Config{Logger: cfg.Logger}
	if !cfg.InsertOnly {
		workers := river.NewWorkers()
		if err := river.AddWorkerSafely(workers, NewProcessDeliveryWorker(pool)); err != nil {
			return nil, err
		}
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{
			QueueDeliveries:    {MaxWorkers: cfg.MaxWorkers},
			river.QueueDefault: {MaxWorkers: cfg.MaxWorkers},
		}
	}
	return river.NewClient(riverpgxv5.New(pool), rc)
}
