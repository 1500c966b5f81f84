package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
)

var (
	ReindexedIndexes    = reindexedIndexes
	DroppedRiverIndexes = droppedRiverIndexes
)

// CompleteProcessedTx is completeTx for jobs whose deliveries were
// processed.
func CompleteProcessedTx(ctx context.Context, tx pgx.Tx, js []*river.Job[ProcessDeliveryArgs]) error {
	return CompleteProcessedAtTx(ctx, tx, js, time.Now())
}

// CompleteProcessedAtTx is CompleteProcessedTx finalizing the jobs at
// finalizedAt.
func CompleteProcessedAtTx(ctx context.Context, tx pgx.Tx, js []*river.Job[ProcessDeliveryArgs], finalizedAt time.Time) error {
	ps := make([]processed, len(js))
	for i, j := range js {
		ps[i] = processed{job: j, outcome: handlers.OutcomeProcessed}
	}
	return completeTx(ctx, tx, ps, finalizedAt)
}

var QueueConfigs = queueConfigs
