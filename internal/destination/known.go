package destination

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/state_seen.sql
	stateSeenSQL string
	//go:embed sql/others_list.sql
	othersListSQL string
	//go:embed sql/state_lock_seen.sql
	stateLockSeenSQL string
	//go:embed sql/sends_abandon.sql
	sendsAbandonSQL string
)

// A started Service records every Config.SeenEvery which destinations its
// process has; one not recorded for SeenLiveFactor times that is
// configured on no running process. Replicas of different configs share
// one database during a rolling deploy, so no process decides from its
// own config alone that a destination is gone: its sends wait for a
// process that has it, and only an operator fails them (AbandonTx).
const (
	DefaultSeenEvery = 10 * time.Second
	SeenLiveFactor   = 6
)

func (s *Service) seenLive() time.Duration { return SeenLiveFactor * s.cfg.SeenEvery }

// States of a destination this process does not have (Status.State).
const (
	// StateElsewhere: another running process has it, and sends to it.
	StateElsewhere = "configured_elsewhere"
	// StateUnknown: no running process has it; its sends wait until one
	// does, or an operator fails them.
	StateUnknown = "unknown"
)

var (
	// ErrConfigured refuses to abandon a destination some running
	// process has.
	ErrConfigured = errors.New("destination: configured on a running process")
	// ErrNoSends: no destination of that name has unfinished sends.
	ErrNoSends = errors.New("destination: no unfinished sends")
)

// sayKnown records that this process has its destinations.
func (s *Service) sayKnown(ctx context.Context) error {
	if _, err := s.cfg.Pool.Exec(ctx, stateSeenSQL, pgnamed.Args{"destinations": s.Names()}); err != nil {
		return fmt.Errorf("destination: record the destinations this process has: %w", err)
	}
	return nil
}

// sayKnownEvery repeats sayKnown until ctx ends.
func (s *Service) sayKnownEvery(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.sayKnown(ctx); err != nil && ctx.Err() == nil {
				s.logger.Warn("destination: "+err.Error(), "retry_in", every.String())
			}
		}
	}
}

// others returns the destinations this process does not have that still
// have unfinished sends.
func (s *Service) others(ctx context.Context) ([]Status, error) {
	rows, err := s.cfg.Pool.Query(ctx, othersListSQL, pgnamed.Args{"destinations": s.Names(), "live_secs": s.seenLive().Seconds()})
	if err != nil {
		return nil, err
	}
	var (
		out  []Status
		name string
		n    int64
		live bool
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &n, &live}, func() error {
		st := Status{Name: name, State: StateUnknown, Pending: n, Counts: map[string]int64{}}
		if live {
			st.State = StateElsewhere
		}
		out = append(out, st)
		return nil
	})
	return out, err
}

// AbandonTx fails, in tx, the unfinished sends of a destination that no
// running process has: an operator's decision that it is gone for good,
// which frees its deliveries for retention. It returns how many sends it
// failed: ErrConfigured when a running process has the destination,
// ErrNoSends when it has none unfinished.
func (s *Service) AbandonTx(ctx context.Context, tx pgx.Tx, name string) (int64, error) {
	if slices.Contains(s.Names(), name) {
		return 0, ErrConfigured
	}
	var live *bool
	err := tx.QueryRow(ctx, stateLockSeenSQL, pgnamed.Args{"destination": name, "live_secs": s.seenLive().Seconds()}).Scan(&live)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	if live != nil && *live {
		return 0, ErrConfigured
	}
	tag, err := tx.Exec(ctx, sendsAbandonSQL, pgnamed.Args{"destination": name})
	if err != nil {
		return 0, err
	}
	if tag.RowsAffected() == 0 {
		return 0, ErrNoSends
	}
	s.logger.Warn("destination: an operator failed the unfinished sends of a destination no running process has",
		"destination", name, "sends", tag.RowsAffected())
	return tag.RowsAffected(), nil
}
