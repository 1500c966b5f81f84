package destination

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// ResumeArgs gives a resumed destination's held sends their jobs again.
// Two resume jobs of one destination may run at once (a pause and a resume
// while the first still runs): they lock their slices with SKIP LOCKED,
// so each held send gets one job.
type ResumeArgs struct {
	Destination string `json:"destination"`
}

func (ResumeArgs) Kind() string { return "destination_resume" }

const (
	// resumeSlice is how many held sends one transaction gives jobs to.
	resumeSlice = 500
	// resumeBudget is how long one run of the resume job works before
	// snoozing to continue: well inside any job timeout.
	resumeBudget = 20 * time.Second
)

type resumeWorker struct {
	river.WorkerDefaults[ResumeArgs]
	svc *Service
}

func (w *resumeWorker) Work(ctx context.Context, job *river.Job[ResumeArgs]) error {
	s := w.svc
	if _, ok := s.dests[job.Args.Destination]; !ok {
		return river.JobCancel(fmt.Errorf("destination %q is no longer configured", job.Args.Destination))
	}
	client := river.ClientFromContext[pgx.Tx](ctx)
	deadline := time.Now().Add(resumeBudget)
	total := 0
	for time.Now().Before(deadline) {
		n, err := s.resumeSlice(ctx, client, job.Args.Destination)
		total += n
		if err != nil {
			return err
		}
		if n < resumeSlice {
			s.logger.Info("destination: resumed", "destination", job.Args.Destination, "sends", total)
			return nil
		}
	}
	s.logger.Info("destination: resuming; continues", "destination", job.Args.Destination, "sends_so_far", total)
	return river.JobSnooze(0)
}

// resumeSlice gives one slice of held sends their jobs, unless the
// destination was paused again meanwhile.
func (s *Service) resumeSlice(ctx context.Context, client inserter, name string) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		var paused bool
		if err := tx.QueryRow(ctx, stateLockSQL, pgx.NamedArgs{"destination": name}).Scan(&paused); err != nil {
			return err
		}
		if paused {
			return errPausedAgain
		}
		rows, err := tx.Query(ctx, heldListSQL, pgx.NamedArgs{"destination": name, "limit": resumeSlice})
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		insert := inTx(client, tx)
		for _, id := range ids {
			if err := s.startTx(ctx, tx, insert, id, name); err != nil {
				return fmt.Errorf("resume held send %d: %w", id, err)
			}
		}
		n = len(ids)
		return nil
	})
	if errors.Is(err, errPausedAgain) {
		return 0, nil
	}
	return n, err
}

var errPausedAgain = errors.New("destination paused again")
