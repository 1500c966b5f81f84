package kafkasource

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// StoreLag stores a reading of source's lag as a consumer does.
func StoreLag(ctx context.Context, pool *pgxpool.Pool, source string, topics []string, partitions []int32, lags []int64) error {
	return storeLag(ctx, pool, source, lagReading{topics: topics, partitions: partitions, lags: lags})
}
