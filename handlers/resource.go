package handlers

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

var (
	//go:embed sql/resource_lock.sql
	resourceLockSQL string
	//go:embed sql/resource_try_lock.sql
	resourceTryLockSQL string
	//go:embed sql/resource_version_get.sql
	resourceVersionGetSQL string
	//go:embed sql/resource_try_lock_many.sql
	resourceTryLockManySQL string
	//go:embed sql/resource_version_get_many.sql
	resourceVersionGetManySQL string
)

// DefaultResourceField is where a standard source's resource id is read
// from when its config does not say.
const DefaultResourceField = "data.id"

// Resource is what a delivery is about, for ordering: deliveries with the
// same Key never run concurrently, and one older than the newest applied
// to Key is stale.
//
// Older means: an earlier At, or the same At and an earlier ReceivedAt
// (providers' timestamps have whole seconds, so ties are broken by when we
// received the events, not by when they happen to be processed). An event
// with no ordering time of its own (AtIsReceipt) is compared only with
// other such events of the resource, by receipt time: a receipt time
// compared with a provider's clock could make a real newer event look
// stale.
type Resource struct {
	// Key names the resource within its source, e.g. "acme/webshop#42" or
	// "pi_123". Empty when the event concerns no resource we can name.
	Key string
	// At is the event's ordering time: when the resource was in the state
	// the event describes. The receipt time when AtIsReceipt.
	At time.Time
	// ReceivedAt is when we received the delivery: the tie-breaker.
	ReceivedAt time.Time
	// AtIsReceipt is true when the event carries no ordering time and At
	// is the receipt time.
	AtIsReceipt bool
}

// resourceOf extracts the resource and ordering time of d:
//   - github: repository + issue/PR number, ordered by the issue's or PR's
//     updated_at; repository + ref for push, ordered by the push's time
//     (repository.pushed_at, else head_commit.timestamp), so a redelivered
//     old push is not taken for the newest;
//   - stripe: data.object.id, ordered by the event's created;
//   - standard: the JSON field at field (dotted path, default data.id),
//     ordered by the body's timestamp;
//   - every other provider (hmac, the presets): the JSON field at field,
//     none when field is empty, ordered by the time verify extracted.
//
// An event without an ordering time is ordered by receipt (AtIsReceipt).
func resourceOf(d *Delivery, field string) Resource {
	r := Resource{ReceivedAt: d.ReceivedAt}
	switch d.Provider {
	case "github":
		if typed, ok := gitHubTypedResource(d, r); ok {
			return typed // go-github parsed it already: no second parse
		}
		f, ok := d.decodeGitHub()
		if !ok || f.repo() == "" {
			return r.orderedBy(time.Time{})
		}
		// Issues and pull requests share one number space on GitHub: a PR
		// is an issue, and both events may describe it.
		for _, n := range []*gitHubItem{f.PullRequest, f.Issue} {
			if n != nil && n.Number > 0 {
				r.Key = f.repo() + "#" + strconv.Itoa(n.Number)
				return r.orderedBy(timeOf(n.UpdatedAt))
			}
		}
		if d.EventType == "push" && f.Ref != "" {
			r.Key = f.repo() + "@" + f.Ref
			at := timeOf(f.Repository.PushedAt)
			if at.IsZero() && f.HeadCommit != nil {
				at = timeOf(f.HeadCommit.Timestamp)
			}
			return r.orderedBy(at)
		}
		return r.orderedBy(time.Time{})
	case "stripe":
		r.Key = jsonString(d.Payload, "data.object.id")
	default:
		if field == "" && d.Provider == "standard" {
			field = DefaultResourceField
		}
		if field != "" {
			r.Key = jsonString(d.Payload, field)
		}
	}
	return r.orderedBy(d.OccurredAt)
}

// gitHubTypedResource is resourceOf for the GitHub events the shipped
// handlers see most, read from go-github's typed event (parsed once for
// the handlers) rather than from a second parse of the payload; the same
// facts as the JSON path. ok is false for other event types.
func gitHubTypedResource(d *Delivery, r Resource) (Resource, bool) {
	var (
		repo   string
		number int
		at     time.Time
	)
	switch ev := d.GitHub.(type) {
	case *github.IssuesEvent:
		repo, number, at = ev.GetRepo().GetFullName(), ev.GetIssue().GetNumber(), ev.GetIssue().GetUpdatedAt().Time
	case *github.IssueCommentEvent:
		repo, number, at = ev.GetRepo().GetFullName(), ev.GetIssue().GetNumber(), ev.GetIssue().GetUpdatedAt().Time
	case *github.PullRequestEvent:
		repo, number, at = ev.GetRepo().GetFullName(), ev.GetPullRequest().GetNumber(), ev.GetPullRequest().GetUpdatedAt().Time
	case *github.PushEvent:
		repo = ev.GetRepo().GetFullName()
		if repo == "" {
			return r.orderedBy(time.Time{}), true
		}
		if d.EventType != "push" || ev.GetRef() == "" {
			return r.orderedBy(time.Time{}), true
		}
		r.Key = repo + "@" + ev.GetRef()
		at = ev.GetRepo().GetPushedAt().Time
		if at.IsZero() {
			at = ev.GetHeadCommit().GetTimestamp().Time
		}
		return r.orderedBy(at), true
	default:
		return r, false
	}
	if repo == "" {
		return r.orderedBy(time.Time{}), true
	}
	if number > 0 {
		r.Key = repo + "#" + strconv.Itoa(number)
		return r.orderedBy(at), true
	}
	return r.orderedBy(time.Time{}), true
}

// orderedBy sets the ordering time, or the receipt time when at is zero.
func (r Resource) orderedBy(at time.Time) Resource {
	if at.IsZero() {
		r.At, r.AtIsReceipt = r.ReceivedAt, true
	} else {
		r.At = at
	}
	return r
}

// jsonString returns the string or number at a dotted path, or "".
func jsonString(payload []byte, path string) string {
	var v any
	if json.Unmarshal(payload, &v) != nil {
		return ""
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[part]
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// LockTx takes the transaction-scoped advisory lock named key in tx,
// waiting for it, for code outside a handler (a follow-up job) that must
// not run at once with a handler that takes the same lock (Event.Lock).
// The lock is held until tx ends. Begin keys with a prefix of your own
// ("ledger:"): hookinbox's locks on resources and deliveries begin with
// "r:" and "d:". Keys whose hashes collide merely serialise.
func LockTx(ctx context.Context, tx pgx.Tx, key string) error {
	return advisoryLock(ctx, tx, key, true)
}

// advisoryLock takes the transaction-scoped advisory lock named key,
// waiting for it, or without wait only if it is free (else ErrResourceBusy).
func advisoryLock(ctx context.Context, tx pgx.Tx, key string, wait bool) error {
	if wait {
		if _, err := tx.Exec(ctx, resourceLockSQL, pgnamed.Args{"lock_key": key}); err != nil {
			return fmt.Errorf("lock %q: %w", key, err)
		}
		return nil
	}
	var locked bool
	if err := tx.QueryRow(ctx, resourceTryLockSQL, pgnamed.Args{"lock_key": key}).Scan(&locked); err != nil {
		return fmt.Errorf("lock %q: %w", key, err)
	}
	if !locked {
		return ErrResourceBusy
	}
	return nil
}

// Version is the newest a resource has seen: the ordering time and
// receipt time of the newest event with an ordering time of its own, and
// the newest receipt time of its events without one. Nil fields: none yet.
type Version struct {
	At, ReceivedAt, ReceiptAt *time.Time
}

// OlderThan reports whether r is older than v: stale, once v was applied.
// Equal is not older: a replay of the newest event applies again.
func (r Resource) OlderThan(v Version) bool {
	if r.AtIsReceipt {
		return v.ReceiptAt != nil && r.ReceivedAt.Before(*v.ReceiptAt)
	}
	if v.At == nil {
		return false
	}
	if !r.At.Equal(*v.At) {
		return r.At.Before(*v.At)
	}
	return v.ReceivedAt != nil && r.ReceivedAt.Before(*v.ReceivedAt)
}
