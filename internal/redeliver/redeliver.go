// Package redeliver asks GitHub to redeliver webhook deliveries that failed
// and never reached the inbox. GitHub does not retry a failed delivery by
// itself; it only lists each attempt and offers a redelivery endpoint.
//
// A pass lists a hook's recent attempts, groups them by delivery GUID (the
// X-GitHub-Delivery header, our inbox.delivery_id), keeps the GUIDs none of
// whose attempts got a 2xx, drops those the inbox already holds, and asks
// GitHub to redeliver the rest. Redeliver runs one pass; Worker runs it as a
// periodic River job.
package redeliver

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// Result is what one pass did; it is the JSON answer of
// POST /admin/sources/{name}/redeliver.
type Result struct {
	// Examined is the number of distinct delivery GUIDs first delivered at
	// or after since.
	Examined int `json:"examined"`
	// Failed is how many of those have no attempt that got a 2xx.
	Failed int `json:"failed"`
	// AlreadyInInbox is how many failed GUIDs the inbox holds anyway: we
	// stored the delivery but GitHub gave up waiting for our answer.
	AlreadyInInbox int `json:"already_in_inbox"`
	// Redelivered is how many redelivery requests GitHub accepted.
	Redelivered int `json:"redelivered"`
	// Errors are the redelivery requests GitHub refused, one
	// "GUID: reason" each. Never nil, so the JSON says [] rather than null.
	Errors []string `json:"errors"`
}

// Redeliver runs one pass over cfg's hook for the deliveries GitHub first
// attempted at or after since.
//
// since bounds the first attempt, not the latest: a redelivery this
// package asked for does not pull an old event back into the window. So a
// delivery our endpoint keeps refusing (a bad signature, say) is retried by
// the passes within since of its first attempt and then left alone, instead
// of being redelivered every period forever.
//
// A failure to list deliveries, or to query the inbox, ends the pass with
// an error (*ListError, matching ErrUnauthorized, ErrHookNotFound or
// ErrRateLimited, for listing; *ConfigError for cfg). A refused redelivery
// is recorded in Result.Errors and the pass goes on. If ctx ends during the
// redeliveries, the counts so far are returned with ctx's error.
func Redeliver(ctx context.Context, pool *pgxpool.Pool, cfg Config, since time.Time) (Result, error) {
	res := Result{Errors: []string{}}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	h, err := newHook(cfg)
	if err != nil {
		return res, err
	}
	attempts, err := h.listSince(ctx, since)
	if err != nil {
		return res, err
	}

	deliveries := group(attempts)
	res.Examined = len(deliveries)
	var failed []*delivery
	for _, d := range deliveries {
		if !d.succeeded {
			failed = append(failed, d)
		}
	}
	res.Failed = len(failed)
	if len(failed) == 0 {
		return res, nil
	}

	known, err := inboxKnown(ctx, pool, cfg.Source, failed)
	if err != nil {
		return res, err
	}
	// Asking the inbox first and redelivering after is a check-then-act,
	// and it is safe here: a delivery stored in between is only
	// redelivered once more, and the redelivery comes back through ingest,
	// where the unique (source, delivery_id) constraint answers it as a
	// duplicate. The check saves calls; the constraint decides duplicates.
	for _, d := range failed {
		if known[d.guid] {
			res.AlreadyInInbox++
			continue
		}
		if err := h.redeliver(ctx, d.latest.GetID()); err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("redeliver: %s: %w", h, ctx.Err())
			}
			res.Errors = append(res.Errors, d.guid+": "+err.Error())
			continue
		}
		res.Redelivered++
	}
	return res, nil
}

// delivery is one GUID's attempts, as far as the listing reached.
type delivery struct {
	guid      string
	original  bool                 // the first (non-redelivery) attempt was listed
	succeeded bool                 // some listed attempt got a 2xx
	latest    *github.HookDelivery // the attempt a redelivery is requested for
}

// group folds attempts (newest first) into deliveries, oldest first, so
// redeliveries reach the handlers roughly in event order and fewer of them
// arrive stale. GUIDs whose first attempt is older than the listing are
// left out: see Redeliver on since.
func group(attempts []*github.HookDelivery) []*delivery {
	byGUID := make(map[string]*delivery)
	var order []*delivery
	for _, a := range attempts {
		guid := a.GetGUID()
		if guid == "" {
			continue // cannot be matched with the inbox
		}
		d := byGUID[guid]
		if d == nil {
			d = &delivery{guid: guid, latest: a}
			byGUID[guid] = d
			order = append(order, d)
		}
		if !a.GetRedelivery() {
			d.original = true
		}
		if code := a.GetStatusCode(); code >= 200 && code < 300 {
			d.succeeded = true
		}
		if newer(a, d.latest) {
			d.latest = a
		}
	}
	slices.Reverse(order)
	return slices.DeleteFunc(order, func(d *delivery) bool { return !d.original })
}

// newer orders attempts by delivery time, then by id, which GitHub assigns
// increasingly; the listing's order is not relied on.
func newer(a, b *github.HookDelivery) bool {
	at, bt := a.GetDeliveredAt().Time, b.GetDeliveredAt().Time
	if !at.Equal(bt) {
		return at.After(bt)
	}
	return a.GetID() > b.GetID()
}

// inboxKnown returns which of the deliveries' GUIDs the inbox holds for
// source, in one query.
func inboxKnown(ctx context.Context, pool *pgxpool.Pool, source string, ds []*delivery) (map[string]bool, error) {
	guids := make([]string, len(ds))
	for i, d := range ds {
		guids[i] = d.guid
	}
	stored, err := inbox.KnownDeliveryIDs(ctx, pool, source, guids)
	if err != nil {
		return nil, fmt.Errorf("redeliver: inbox lookup for source %q: %w", source, err)
	}
	known := make(map[string]bool, len(stored))
	for _, id := range stored {
		known[id] = true
	}
	return known, nil
}
