package destination

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

var (
	//go:embed sql/attempt_insert.sql
	attemptInsertSQL string
	//go:embed sql/send_finish.sql
	sendFinishSQL string
	//go:embed sql/circuit_failure.sql
	circuitFailureSQL string
	//go:embed sql/circuit_success.sql
	circuitSuccessSQL string
	//go:embed sql/resource_sent_advance.sql
	resourceSentAdvanceSQL string
	//go:embed sql/jobs_wake.sql
	jobsWakeSQL string
	//go:embed sql/send_hold.sql
	sendHoldSQL string
	//go:embed sql/state_lock.sql
	stateLockSQL string
)

// outcome is what becomes of a send after a request, or without one.
type outcome struct {
	state      string // pending (retry), succeeded, failed, skipped
	stale      bool
	attempted  bool
	lastStatus *int
	lastError  *string
}

// record stores a request's attempt and its consequences in one
// transaction: the send's state, the circuit, the slot's release, the
// resource's turn, and on success the job's completion. Then it tells
// River what is next: done, a retry after the schedule's wait, or a
// cancelled job for a send that finally failed.
func (s *Service) record(ctx context.Context, job *river.Job[SendArgs], d *dest, send *loadedSend, res response) error {
	attempt := send.Attempts + 1
	o := outcome{state: "succeeded", stale: res.stale, attempted: true}
	if res.status != 0 {
		o.lastStatus = &res.status
	}
	var retryIn time.Duration
	if !res.ok() {
		msg := res.describe()
		o.lastError = &msg
		retryIn = nextRetry(d, attempt, res.retryAfter)
		switch {
		case attempt > len(d.Retry.Schedule):
			o.state = "failed"
		case time.Since(send.CreatedAt)+retryIn > d.Retry.MaxAge:
			o.state = "failed"
		default:
			o.state = "pending"
		}
	}
	outcomeLabel := map[string]string{"succeeded": "succeeded", "failed": "failed", "pending": "retry"}[o.state]
	s.cfg.Observe(d.Name, outcomeLabel, res.took)

	opened := false
	err := pgx.BeginFunc(context.WithoutCancel(ctx), s.cfg.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, attemptInsertSQL, pgx.NamedArgs{
			"send_id": send.ID, "attempt": attempt, "attempted_at": res.at, "duration_ms": res.took.Milliseconds(),
			"status": o.lastStatus, "error": o.lastError, "response": nilIfEmpty(res.body), "stale": res.stale, "probe": res.probe,
		}); err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		if res.lease != nil {
			if _, err := tx.Exec(ctx, leaseReleaseSQL, res.lease.args(d.Name)); err != nil {
				return fmt.Errorf("release slot: %w", err)
			}
		}
		if res.ok() {
			var closed bool
			err := tx.QueryRow(ctx, circuitSuccessSQL, pgx.NamedArgs{"destination": d.Name}).Scan(&closed)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("close circuit: %w", err)
			}
			if closed {
				// The sends that waited for the circuit go now, at the
				// configured rate, instead of at their snoozes' end.
				if _, err := tx.Exec(ctx, jobsWakeSQL, pgx.NamedArgs{"destination": d.Name}); err != nil {
					return fmt.Errorf("wake waiting sends: %w", err)
				}
			}
		} else {
			if err := tx.QueryRow(ctx, circuitFailureSQL, pgx.NamedArgs{
				"destination": d.Name, "attempted_at": res.at, "last_error": o.lastError,
				"threshold": d.Circuit.Failures, "probe_every": d.Circuit.ProbeEvery,
			}).Scan(&opened); err != nil {
				return fmt.Errorf("count failure: %w", err)
			}
		}
		return s.finishTx(ctx, tx, job, d, send, o)
	})
	if err != nil {
		return err
	}
	log := s.logger.With("destination", d.Name, "source", send.Source, "delivery_id", send.DeliveryID,
		"webhook_id", send.Key, "attempt", attempt, "status", res.status, "duration", res.took.String())
	switch o.state {
	case "succeeded":
		log.Debug("destination: sent")
		return nil
	case "failed":
		log.Error("destination: send failed for good; an operator may retry it", "error", *o.lastError)
		return river.JobCancel(errors.New(*o.lastError))
	default:
		level := slog.LevelWarn
		if opened {
			log = log.With("circuit", "open")
		}
		log.Log(ctx, level, "destination: send failed; retrying with the same webhook-id", "error", *o.lastError, "retry_in", retryIn.String())
		return river.JobSnooze(retryIn)
	}
}

// hold gives up a paused destination's send's job: the send waits, held,
// until a resume gives it a new one. The destination's state row is
// locked first, as the resume locks it, so either the resume sees the
// send held or the send sees the resume (held false: send it now).
func (s *Service) hold(ctx context.Context, job *river.Job[SendArgs], d *dest, send *loadedSend) (bool, error) {
	held := false
	err := pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		var paused bool
		if err := tx.QueryRow(ctx, stateLockSQL, pgx.NamedArgs{"destination": d.Name}).Scan(&paused); err != nil {
			return fmt.Errorf("destination %s: lock state: %w", d.Name, err)
		}
		if !paused {
			return nil
		}
		if _, err := tx.Exec(ctx, sendHoldSQL, pgx.NamedArgs{"id": send.ID}); err != nil {
			return fmt.Errorf("hold send: %w", err)
		}
		held = true
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	return held, err
}

// finish records an outcome without a request (a stale event skipped).
func (s *Service) finish(ctx context.Context, job *river.Job[SendArgs], d *dest, send *loadedSend, o outcome) error {
	return pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		return s.finishTx(ctx, tx, job, d, send, o)
	})
}

// finishTx moves the send to its outcome; a final one hands on its
// resource's turn and, on success, moves forward what the destination got
// and completes the job. A send another run already decided is left alone.
func (s *Service) finishTx(ctx context.Context, tx pgx.Tx, job *river.Job[SendArgs], d *dest, send *loadedSend, o outcome) error {
	attempted := 0
	if o.attempted {
		attempted = 1
	}
	tag, err := tx.Exec(ctx, sendFinishSQL, pgx.NamedArgs{
		"id": send.ID, "state": o.state, "attempted": attempted, "stale": o.stale,
		"last_status": o.lastStatus, "last_error": o.lastError,
	})
	if err != nil {
		return fmt.Errorf("record send outcome: %w", err)
	}
	if tag.RowsAffected() == 0 || o.state == "pending" {
		return nil
	}
	if send.Ordered {
		k := send.chain(d.Name)
		if o.state == "succeeded" {
			if _, err := tx.Exec(ctx, resourceSentAdvanceSQL, pgx.NamedArgs{
				"destination": k.destination, "source": k.source, "resource_key": k.resource,
				"event_at": send.Resource.At, "event_received_at": send.Resource.ReceivedAt, "at_is_receipt": send.Resource.AtIsReceipt,
			}); err != nil {
				return fmt.Errorf("record what the destination got: %w", err)
			}
		}
		if err := s.finishChainTx(ctx, tx, inTx(river.ClientFromContext[pgx.Tx](ctx), tx), k); err != nil {
			return err
		}
	}
	if o.state == "failed" {
		return nil // the job is cancelled after the commit, with the error
	}
	_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	return err
}

// abandon fails a send that can no longer be made (its destination left
// the configuration).
func (s *Service) abandon(ctx context.Context, job *river.Job[SendArgs], cause error) error {
	msg := cause.Error()
	_, err := s.cfg.Pool.Exec(ctx, sendFinishSQL, pgx.NamedArgs{
		"id": job.Args.SendID, "state": "failed", "attempted": 0, "stale": false, "last_status": nil, "last_error": &msg,
	})
	if err != nil {
		return err
	}
	s.logger.Error("destination: send abandoned", "send_id", job.Args.SendID, "error", cause)
	return river.JobCancel(cause)
}

// nextRetry is the wait before retry number attempt: the schedule's,
// jittered, or a longer Retry-After.
func nextRetry(d *dest, attempt int, retryAfter time.Duration) time.Duration {
	i := min(attempt, len(d.Retry.Schedule)) - 1
	return max(jitter(d.Retry.Schedule[i]), retryAfter)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
