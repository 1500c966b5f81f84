package destination

import (
	"context"
	_ "embed"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/status_list.sql
	statusListSQL string
	//go:embed sql/outcome_counts.sql
	outcomeCountsSQL string
	//go:embed sql/state_set_paused.sql
	stateSetPausedSQL string
	//go:embed sql/send_retry_reset.sql
	sendRetryResetSQL string
	//go:embed sql/sends_of_delivery.sql
	sendsOfDeliverySQL string
	//go:embed sql/attempts_of_sends.sql
	attemptsOfSendsSQL string
	//go:embed sql/pending_counts.sql
	pendingCountsSQL string
	//go:embed sql/failed_sends_of.sql
	failedSendsOfSQL string
)

// ErrNotFound: no destination of that name is configured.
var ErrNotFound = errors.New("destination: no such destination")

// Status is a destination's health.
type Status struct {
	Name string `json:"name"`
	// State is active, paused or open (the circuit breaker stopped
	// sending, but for a probe every circuit.probe_every).
	State               string     `json:"state"`
	InFlight            int64      `json:"in_flight"`
	Pending             int64      `json:"pending"` // sends not yet finished
	FailingSince        *time.Time `json:"failing_since"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	// LastError is the error of the last failed request while the
	// destination is failing (FailingSince set); nil once a request
	// succeeded, so a recovered destination shows no error as current.
	LastError *string `json:"last_error"`
	// LastErrorAt is when the last failed request was made, kept after
	// the destination recovers: with FailingSince nil, its error was
	// resolved. Nil: no request to it has failed.
	LastErrorAt *time.Time       `json:"last_error_at"`
	Counts      map[string]int64 `json:"counts"` // sends by state: succeeded, failed, skipped, pending, waiting
	// LastFailedSend is the send that failed last, while any is kept
	// failed; nil when none is. Unlike LastError it names failures that
	// made no request, such as a route that failed to evaluate.
	LastFailedSend *FailedSend `json:"last_failed_send"`
}

// FailedSend is a send that failed for good: its delivery and its error
// (as recorded: a URL's secrets are masked).
type FailedSend struct {
	// InboxID is the delivery's id in the inbox (the admin API's id).
	InboxID     int64     `json:"id,omitempty"`
	Source      string    `json:"source,omitempty"`
	DeliveryID  string    `json:"delivery_id,omitempty"`
	Destination string    `json:"destination"`
	Error       *string   `json:"error"`
	FinishedAt  time.Time `json:"finished_at"`
}

// Statuses returns every configured destination's health, then the
// destinations this process does not have that still have unfinished
// sends (StateElsewhere, StateUnknown).
func (s *Service) Statuses(ctx context.Context) ([]Status, error) {
	names := s.Names()
	for _, name := range names {
		if err := s.ensureShared(ctx, s.dests[name]); err != nil {
			return nil, err
		}
	}
	rows, err := s.cfg.Pool.Query(ctx, statusListSQL, pgx.NamedArgs{"destinations": names})
	if err != nil {
		return nil, err
	}
	var out []Status
	byName := map[string]*Status{}
	for rows.Next() {
		var (
			st           Status
			paused, open bool
			failedID     *int64
			failed       FailedSend
			failedSource *string
			failedDID    *string
			failedAt     *time.Time
		)
		if err := rows.Scan(&st.Name, &paused, &open, &st.FailingSince, &st.LastError, &st.LastErrorAt, &st.ConsecutiveFailures, &st.InFlight, &st.Pending,
			&failedID, &failedSource, &failedDID, &failed.Error, &failedAt); err != nil {
			rows.Close()
			return nil, err
		}
		if failedID != nil {
			failed.InboxID, failed.Source, failed.DeliveryID, failed.Destination, failed.FinishedAt = *failedID, *failedSource, *failedDID, st.Name, *failedAt
			st.LastFailedSend = &failed
		}
		switch {
		case paused:
			st.State = "paused"
		case open:
			st.State = "open"
		default:
			st.State = "active"
		}
		st.Counts = map[string]int64{}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		byName[out[i].Name] = &out[i]
	}
	rows, err = s.cfg.Pool.Query(ctx, outcomeCountsSQL, pgx.NamedArgs{"destinations": names})
	if err != nil {
		return nil, err
	}
	var (
		name, state string
		n           int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&name, &state, &n}, func() error {
		if st := byName[name]; st != nil {
			st.Counts[state] = n
		}
		return nil
	}); err != nil {
		return nil, err
	}
	others, err := s.others(ctx)
	if err != nil {
		return nil, err
	}
	return append(out, others...), nil
}

// SetPausedTx pauses or resumes a destination in tx. A paused destination
// claims nothing: its sends wait, pending (nothing is dropped), and
// requests already in flight end. Resuming lets the senders claim again;
// this process's sender looks at once, the others within their poll
// interval.
func (s *Service) SetPausedTx(ctx context.Context, tx pgx.Tx, name string, paused bool) error {
	if _, ok := s.dests[name]; !ok {
		return ErrNotFound
	}
	// Takes the state row's lock, which every claim takes first.
	if _, err := tx.Exec(ctx, stateSetPausedSQL, pgx.NamedArgs{"destination": name, "paused": paused}); err != nil {
		return err
	}
	if !paused {
		s.hint(name)
	}
	return nil
}

// MaxRetry bounds the failed sends one RetryFailedTx sends again.
const MaxRetry = 10_000

// RetryFailedTx sends again, with their same keys, a destination's sends
// that failed for good at or after since: each starts a fresh retry
// schedule. The sender puts ordered sends in their resources' lines,
// behind the send in progress. It returns how many it took.
func (s *Service) RetryFailedTx(ctx context.Context, tx pgx.Tx, name string, since time.Time) (int, error) {
	if _, ok := s.dests[name]; !ok {
		return 0, ErrNotFound
	}
	tag, err := tx.Exec(ctx, sendRetryResetSQL, pgx.NamedArgs{"destination": name, "since": since, "limit": MaxRetry})
	if err != nil {
		return 0, err
	}
	if tag.RowsAffected() > 0 {
		s.hint(name)
	}
	return int(tag.RowsAffected()), nil
}

// Send is one destination's send of a delivery, with its attempts.
type Send struct {
	ID          int64     `json:"id"`
	Destination string    `json:"destination"`
	Key         string    `json:"webhook_id"`
	State       string    `json:"state"`
	Stale       bool      `json:"stale"`
	Attempts    []Attempt `json:"attempts"`
	LastStatus  *int      `json:"last_status"`
	LastError   *string   `json:"last_error"`
	// NextAttemptAt is when a pending send is due next.
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	CreatedAt     time.Time  `json:"created_at"`
	FinishedAt    *time.Time `json:"finished_at"`
	attempts      int
}

// Attempt is one request of a send.
type Attempt struct {
	Attempt     int       `json:"attempt"`
	AttemptedAt time.Time `json:"attempted_at"`
	DurationMS  int       `json:"duration_ms"`
	Status      *int      `json:"status"`
	Error       *string   `json:"error"`
	Response    *string   `json:"response"`
	Stale       bool      `json:"stale"`
	Probe       bool      `json:"probe"`
}

// DeliveryKey names a delivery as its sends do.
type DeliveryKey struct{ Source, DeliveryID string }

// FailedSendsOf returns the failed sends of the deliveries keys names, by
// delivery, each delivery's by destination.
func FailedSendsOf(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, keys []DeliveryKey) (map[DeliveryKey][]FailedSend, error) {
	out := map[DeliveryKey][]FailedSend{}
	if len(keys) == 0 {
		return out, nil
	}
	sources, ids := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		sources[i], ids[i] = k.Source, k.DeliveryID
	}
	rows, err := q.Query(ctx, failedSendsOfSQL, pgx.NamedArgs{"sources": sources, "delivery_ids": ids})
	if err != nil {
		return nil, err
	}
	var (
		k  DeliveryKey
		fs FailedSend
	)
	_, err = pgx.ForEachRow(rows, []any{&k.Source, &k.DeliveryID, &fs.Destination, &fs.Error, &fs.FinishedAt}, func() error {
		out[k] = append(out[k], fs)
		return nil
	})
	return out, err
}

// SendsOf returns what every destination got of one delivery.
func SendsOf(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, source, deliveryID string) ([]Send, error) {
	rows, err := q.Query(ctx, sendsOfDeliverySQL, pgx.NamedArgs{"source": source, "delivery_id": deliveryID})
	if err != nil {
		return nil, err
	}
	sends := []Send{}
	for rows.Next() {
		var sd Send
		if err := rows.Scan(&sd.ID, &sd.Destination, &sd.Key, &sd.State, &sd.Stale, &sd.attempts, &sd.LastStatus,
			&sd.LastError, &sd.NextAttemptAt, &sd.CreatedAt, &sd.FinishedAt); err != nil {
			rows.Close()
			return nil, err
		}
		sd.Attempts = []Attempt{}
		sends = append(sends, sd)
	}
	if err := rows.Err(); err != nil || len(sends) == 0 {
		return sends, err
	}
	ids := make([]int64, len(sends))
	index := map[int64]int{}
	for i, sd := range sends {
		ids[i], index[sd.ID] = sd.ID, i
	}
	rows, err = q.Query(ctx, attemptsOfSendsSQL, pgx.NamedArgs{"send_ids": ids})
	if err != nil {
		return nil, err
	}
	var (
		sendID int64
		a      Attempt
	)
	_, err = pgx.ForEachRow(rows, []any{&sendID, &a.Attempt, &a.AttemptedAt, &a.DurationMS, &a.Status, &a.Error, &a.Response, &a.Stale, &a.Probe}, func() error {
		i := index[sendID]
		sends[i].Attempts = append(sends[i].Attempts, a)
		a = Attempt{}
		return nil
	})
	return sends, err
}

// Pending returns the unfinished sends per destination, for metrics.
func (s *Service) Pending(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, n := range s.Names() {
		out[n] = 0
	}
	rows, err := s.cfg.Pool.Query(ctx, pendingCountsSQL, pgx.NamedArgs{"destinations": s.Names()})
	if err != nil {
		return nil, err
	}
	var (
		name string
		n    float64
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error { out[name] = n; return nil })
	return out, err
}
