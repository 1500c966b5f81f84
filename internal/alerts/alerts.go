// Package alerts raises operational alerts: conditions an operator must
// hear about (a destination failing, sends or deliveries failed for good,
// a source gone silent, a backlog, a Kafka source falling behind), each
// opened once when it has held long
// enough and resolved once when it no longer holds.
//
// An alert is an event, hookinbox.alert.opened or hookinbox.alert.resolved,
// recorded in the inbox as a delivery of the built-in source "hookinbox"
// (in the transaction that opens or resolves it, with its processing job),
// so it reaches people through the ordinary routes and destinations:
// signed, retried, visible in the console, replayable. Evaluation runs in a
// periodic River job, under a transaction-scoped advisory lock, so two
// processes never raise the same alert.
package alerts

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

// Source is the built-in source alerts are recorded under, and its
// provider.
const Source = "hookinbox"

// Event types of alerts.
const (
	EventOpened   = "hookinbox.alert.opened"
	EventResolved = "hookinbox.alert.resolved"
)

// Origin is the inbox origin of an alert.
const Origin = "alert"

// Rules says which conditions raise alerts; a nil field is a rule not
// configured.
type Rules struct {
	// DestinationFailing: a destination's circuit open, or every request
	// to it failing, for this long.
	DestinationFailing *time.Duration
	// SendsFailed: at least this many sends of a destination failed for
	// good (not yet retried).
	SendsFailed *int
	// DeliveriesFailed: at least this many deliveries of a source failed
	// for good (not yet replayed).
	DeliveriesFailed *int
	// Silent: each source that must accept a delivery at least this often.
	Silent []Silence
	// Backlog: more than BacklogOver deliveries waiting to be processed
	// for BacklogFor.
	BacklogOver *int64
	BacklogFor  time.Duration
	// KafkaLag: each Kafka source whose lag must not stay above its Over.
	KafkaLag []KafkaLag
}

// Silence is a source_silent rule: Source accepted no delivery for For.
type Silence struct {
	Source string
	For    time.Duration
}

// KafkaLag is a kafka_lag rule: the newest reading of Source's lag stored
// by its consumers (table kafka_lag), summed over its partitions, more
// than Over for For. The newest reading counts however old it is: a
// consumer that stopped reading leaves its last one, and a reading older
// than Stale says when it was read in the summary.
type KafkaLag struct {
	Source string
	Over   int64
	For    time.Duration
	// Stale is the age past which no reading has come when one should
	// have: two of the source's reading periods. Zero: never said.
	Stale time.Duration
}

// Alert is one alert's event: the body of its delivery.
type Alert struct {
	Type    string    `json:"type"` // EventOpened or EventResolved
	ID      int64     `json:"alert_id"`
	Rule    string    `json:"rule"`
	Subject string    `json:"subject"`
	Since   time.Time `json:"since"`
	At      time.Time `json:"at"`
	Summary string    `json:"summary"`
	// Console is the alert on the console's Alerts page.
	Console string `json:"console,omitempty"`
	// SubjectConsole is the console's page of the subject (SubjectPath),
	// when it has one.
	SubjectConsole string     `json:"subject_console,omitempty"`
	Opened         *time.Time `json:"opened_at,omitempty"`
}

// ConsolePath is where the console shows alert id, relative to the
// console's base URL: its row on the Alerts page.
func ConsolePath(id int64) string { return "alerts#a" + strconv.FormatInt(id, 10) }

// SubjectPath is the console's page of an alert's subject, relative to
// the console's base URL: what an operator opens to act on it. "" when
// the rule's subject has no page.
func SubjectPath(rule, subject string) string {
	switch rule {
	case "destination_failing":
		return "#dest-" + subject // its row on the Overview: state, error, Pause
	case "sends_failed":
		return "deliveries?" + url.Values{"send_status": {"failed"}, "destination": {subject}}.Encode()
	case "deliveries_failed":
		return "deliveries?" + url.Values{"source": {subject}, "status": {"failed"}}.Encode()
	case "source_silent", "kafka_lag":
		return "#source-" + subject // its section on the Overview: requests per minute
	case "backlog":
		return "deliveries?status=received"
	}
	return ""
}

var (
	//go:embed sql/conditions.sql
	conditionsSQL string
	//go:embed sql/open.sql
	openSQL string
	//go:embed sql/unresolved.sql
	unresolvedSQL string
	//go:embed sql/track.sql
	trackSQL string
	//go:embed sql/resolve.sql
	resolveSQL string
)

// lockKey is the advisory lock one evaluation holds: "hookinbox.alerts".
const lockKey = 0x686b696e616c7274

// condition is one (rule, subject) that holds now.
type condition struct {
	rule, subject, summary string
	since                  time.Time
}

// Evaluator opens and resolves alerts.
type Evaluator struct {
	Rules Rules
	// Inbox records the alerts' deliveries. Set before the first Evaluate;
	// give it OnQueue's inserter, so that an alert is not processed behind
	// a backlog.
	Inbox *ingest.Inbox
	// ConsoleURL is the console's base URL, for links; "" for none.
	ConsoleURL string
}

// EvaluateTx compares the conditions that hold now with the alerts open or
// pending, in tx: a new condition is tracked from now, one that has held
// long enough is opened, one that no longer holds is resolved (or, still
// pending, forgotten). Each open and resolve records its delivery in tx.
// It returns how many alerts it opened and resolved.
func (e *Evaluator) EvaluateTx(ctx context.Context, tx pgx.Tx) (opened, resolved int, err error) {
	if e.Inbox == nil {
		return 0, 0, errors.New("alerts: Evaluator.Inbox is not set")
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(lockKey)); err != nil {
		return 0, 0, err
	}
	now, conds, err := e.conditions(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	holding := map[[2]string]condition{}
	for _, c := range conds {
		holding[[2]string{c.rule, c.subject}] = c
		if _, err := tx.Exec(ctx, trackSQL, pgnamed.Args{"rule": c.rule, "subject": c.subject, "since": c.since,
			"summary": c.summary}); err != nil {
			return 0, 0, fmt.Errorf("alerts: track %s %s: %w", c.rule, c.subject, err)
		}
	}
	if resolved, err = e.resolveGone(ctx, tx, now, holding); err != nil {
		return 0, 0, err
	}
	opened, err = e.openDue(ctx, tx, now)
	return opened, resolved, err
}

// conditions reads what holds now, and the database's now.
func (e *Evaluator) conditions(ctx context.Context, tx pgx.Tx) (time.Time, []condition, error) {
	var now time.Time
	if err := tx.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		return now, nil, err
	}
	r := e.Rules
	sources, fors := make([]string, len(r.Silent)), make([]time.Duration, len(r.Silent))
	for i, s := range r.Silent {
		sources[i], fors[i] = s.Source, s.For
	}
	lagSources, lagOvers, lagStales := make([]string, len(r.KafkaLag)), make([]int64, len(r.KafkaLag)),
		make([]time.Duration, len(r.KafkaLag))
	for i, l := range r.KafkaLag {
		lagSources[i], lagOvers[i], lagStales[i] = l.Source, l.Over, l.Stale
	}
	rows, err := tx.Query(ctx, conditionsSQL, pgnamed.Args{
		"failing_for": r.DestinationFailing, "sends_min": r.SendsFailed, "deliveries_min": r.DeliveriesFailed,
		"silent_sources": sources, "silent_fors": fors, "backlog_over": r.BacklogOver,
		"lag_sources": lagSources, "lag_overs": lagOvers, "lag_stales": lagStales,
	})
	if err != nil {
		return now, nil, fmt.Errorf("alerts: conditions: %w", err)
	}
	conds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (condition, error) {
		var c condition
		err := row.Scan(&c.rule, &c.subject, &c.since, &c.summary)
		return c, err
	})
	return now, conds, err
}

// resolveGone resolves the open alerts whose condition no longer holds,
// and forgets the pending ones.
func (e *Evaluator) resolveGone(ctx context.Context, tx pgx.Tx, now time.Time, holding map[[2]string]condition) (int, error) {
	rows, err := tx.Query(ctx, unresolvedSQL)
	if err != nil {
		return 0, err
	}
	type row struct {
		id                     int64
		rule, subject, summary string
		since                  time.Time
		opened                 *time.Time
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.rule, &x.subject, &x.since, &x.opened, &x.summary)
		return x, err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range all {
		if _, ok := holding[[2]string{a.rule, a.subject}]; ok {
			continue
		}
		if _, err := tx.Exec(ctx, resolveSQL, pgnamed.Args{"id": a.id}); err != nil {
			return n, err
		}
		if a.opened == nil {
			continue // pending: never raised, so nothing to resolve for people
		}
		err := e.record(ctx, tx, Alert{Type: EventResolved, ID: a.id, Rule: a.rule, Subject: a.subject, Since: a.since, At: now,
			Opened: a.opened, Summary: "Resolved: " + a.summary})
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// openDue opens the pending alerts whose condition has held long enough.
func (e *Evaluator) openDue(ctx context.Context, tx pgx.Tx, now time.Time) (int, error) {
	failingFor, backlogFor := time.Duration(0), e.Rules.BacklogFor
	if e.Rules.DestinationFailing != nil {
		failingFor = *e.Rules.DestinationFailing
	}
	lagSources, lagFors := make([]string, len(e.Rules.KafkaLag)), make([]time.Duration, len(e.Rules.KafkaLag))
	for i, l := range e.Rules.KafkaLag {
		lagSources[i], lagFors[i] = l.Source, l.For
	}
	rows, err := tx.Query(ctx, openSQL, pgnamed.Args{"failing_for": failingFor, "backlog_for": backlogFor,
		"lag_sources": lagSources, "lag_fors": lagFors})
	if err != nil {
		return 0, err
	}
	due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Alert, error) {
		a := Alert{Type: EventOpened, At: now}
		err := r.Scan(&a.ID, &a.Rule, &a.Subject, &a.Since, &a.Summary)
		return a, err
	})
	if err != nil {
		return 0, err
	}
	for _, a := range due {
		a.Opened = &now
		if err := e.record(ctx, tx, a); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// record records an alert's event as a delivery of Source, with its job.
func (e *Evaluator) record(ctx context.Context, tx pgx.Tx, a Alert) error {
	if e.ConsoleURL != "" {
		a.Console = e.ConsoleURL + ConsolePath(a.ID)
		if p := SubjectPath(a.Rule, a.Subject); p != "" {
			a.SubjectConsole = e.ConsoleURL + p
		}
	}
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	suffix := "opened"
	if a.Type == EventResolved {
		suffix = "resolved"
	}
	_, err = e.Inbox.RecordTx(ctx, tx, ingest.Delivery{Source: Source, DeliveryID: fmt.Sprintf("alert-%d-%s", a.ID, suffix),
		EventType: a.Type, OccurredAt: a.At, Payload: body, Origin: Origin,
		Headers: map[string][]string{"Content-Type": {"application/json"}}})
	if err != nil {
		return fmt.Errorf("alerts: record alert %d: %w", a.ID, err)
	}
	return nil
}
