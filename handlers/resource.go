package handlers

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/resource_lock.sql
	resourceLockSQL string
	//go:embed sql/resource_try_lock.sql
	resourceTryLockSQL string
	//go:embed sql/resource_version_get.sql
	resourceVersionGetSQL string
	//go:embed sql/resource_version_upsert.sql
	resourceVersionUpsertSQL string
)

// DefaultResourceField is where a standard source's resource id is read
// from when its config does not say.
const DefaultResourceField = "data.id"

// Resource is what a delivery is about, for ordering: deliveries with the
// same Key never run concurrently, and one whose At is older than the newest
// applied to Key is stale.
type Resource struct {
	// Key names the resource within its source, e.g. "acme/webshop#42" or
	// "pi_123". Empty when the event concerns no resource we can name.
	Key string
	// At is the event's ordering time: when the resource was in the state
	// the event describes.
	At time.Time
}

// resourceOf extracts the resource and ordering time of d:
//   - github: repository + issue/PR number (ordered by the issue's or PR's
//     updated_at), or repository + ref for push (ordered by receipt);
//   - stripe: data.object.id, ordered by the event's created;
//   - standard: the JSON field at field (dotted path), ordered by the
//     body's timestamp.
//
// Receipt time stands in for a missing ordering time.
func resourceOf(d Delivery, field string) Resource {
	r := Resource{At: d.ReceivedAt}
	switch d.Provider {
	case "github":
		var p struct {
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
			Issue       *numberedAt `json:"issue"`
			PullRequest *numberedAt `json:"pull_request"`
			Ref         string      `json:"ref"`
		}
		if json.Unmarshal(d.Payload, &p) != nil || p.Repository.FullName == "" {
			return r
		}
		// Issues and pull requests share one number space on GitHub: a PR
		// is an issue, and both events may describe it.
		for _, n := range []*numberedAt{p.PullRequest, p.Issue} {
			if n != nil && n.Number > 0 {
				r.Key = p.Repository.FullName + "#" + strconv.Itoa(n.Number)
				if !n.UpdatedAt.IsZero() {
					r.At = n.UpdatedAt
				}
				return r
			}
		}
		if d.EventType == "push" && p.Ref != "" {
			r.Key = p.Repository.FullName + "@" + p.Ref
		}
	case "stripe":
		r.Key = jsonString(d.Payload, "data.object.id")
		if !d.OccurredAt.IsZero() {
			r.At = d.OccurredAt
		}
	default:
		if field == "" {
			field = DefaultResourceField
		}
		r.Key = jsonString(d.Payload, field)
		if !d.OccurredAt.IsZero() {
			r.At = d.OccurredAt
		}
	}
	return r
}

type numberedAt struct {
	Number    int       `json:"number"`
	UpdatedAt time.Time `json:"updated_at"`
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

// lockResource serialises deliveries for r, or for the delivery itself when
// it names no resource (so two jobs for one delivery, say a replay racing
// the original, still never run at once). Without wait it takes the lock
// only if it is free, else returns ErrResourceBusy.
func lockResource(ctx context.Context, tx pgx.Tx, d Delivery, r Resource, wait bool) error {
	// Length-prefixed so no source/key pair can spell another's lock key.
	key := fmt.Sprintf("d:%d:%s:%s", len(d.Source), d.Source, d.DeliveryID)
	if r.Key != "" {
		key = fmt.Sprintf("r:%d:%s:%s", len(d.Source), d.Source, r.Key)
	}
	return advisoryLock(ctx, tx, key, wait)
}

// advisoryLock takes the transaction-scoped advisory lock named key,
// waiting for it, or without wait only if it is free (else ErrResourceBusy).
func advisoryLock(ctx context.Context, tx pgx.Tx, key string, wait bool) error {
	if wait {
		if _, err := tx.Exec(ctx, resourceLockSQL, pgx.NamedArgs{"lock_key": key}); err != nil {
			return fmt.Errorf("lock %q: %w", key, err)
		}
		return nil
	}
	var locked bool
	if err := tx.QueryRow(ctx, resourceTryLockSQL, pgx.NamedArgs{"lock_key": key}).Scan(&locked); err != nil {
		return fmt.Errorf("lock %q: %w", key, err)
	}
	if !locked {
		return ErrResourceBusy
	}
	return nil
}

// isStale reports whether a newer event than r.At was applied to r.
// Called with the resource locked, so the answer holds until commit.
func isStale(ctx context.Context, tx pgx.Tx, source string, r Resource) (bool, error) {
	if r.Key == "" {
		return false, nil
	}
	var applied time.Time
	err := tx.QueryRow(ctx, resourceVersionGetSQL, pgx.NamedArgs{"source": source, "resource_key": r.Key}).Scan(&applied)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read resource version: %w", err)
	}
	// Equal is not stale: a replay of the newest event, or two events in
	// the same second (providers' timestamps are whole seconds), apply.
	return r.At.Before(applied), nil
}

// recordApplied moves the resource's version forward (never back).
func recordApplied(ctx context.Context, tx pgx.Tx, d Delivery, r Resource) error {
	if r.Key == "" {
		return nil
	}
	_, err := tx.Exec(ctx, resourceVersionUpsertSQL, pgx.NamedArgs{
		"source": d.Source, "resource_key": r.Key, "applied_at": r.At, "delivery_id": d.DeliveryID,
	})
	if err != nil {
		return fmt.Errorf("record resource version: %w", err)
	}
	return nil
}
