package alerts

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/hookinbox/hookinbox/ingest"
)

// Queue is the River queue an alert's processing job runs on: not the
// deliveries queue, where a backlog alert would wait behind the backlog it
// reports. Every working process runs it.
const Queue = river.QueueDefault

// OnQueue is jobs with every job it inserts put on Queue: the job inserter
// of the inbox an Evaluator records its alerts in.
func OnQueue(jobs ingest.JobInserter) ingest.JobInserter { return queueInserter{jobs} }

type queueInserter struct{ ingest.JobInserter }

func (q queueInserter) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return q.JobInserter.InsertTx(ctx, tx, args, onQueue(opts))
}

func (q queueInserter) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	moved := make([]river.InsertManyParams, len(params))
	for i, p := range params {
		moved[i] = river.InsertManyParams{Args: p.Args, InsertOpts: onQueue(p.InsertOpts)}
	}
	return q.JobInserter.InsertManyTx(ctx, tx, moved)
}

func onQueue(opts *river.InsertOpts) *river.InsertOpts {
	o := river.InsertOpts{}
	if opts != nil {
		o = *opts
	}
	o.Queue = Queue
	return &o
}
