package handlers_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

type mirrorRow struct {
	kind, state, title, lastDelivery string
	updatedAt                        time.Time
}

func (b *testBundle) mirror(t *testing.T, repo string, number int) mirrorRow {
	t.Helper()
	var m mirrorRow
	require.NoError(t, b.Pool.QueryRow(context.Background(),
		"SELECT kind, state, title, last_delivery_id, updated_at FROM github_issue_mirror WHERE repo = $1 AND number = $2",
		repo, number).Scan(&m.kind, &m.state, &m.title, &m.lastDelivery, &m.updatedAt))
	return m
}

// Delivered E2 then E1 (E1 older): the latest-state mirror ends with E2.
func TestMirrorOutOfOrderKeepsNewest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	t1 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Minute)

	e2 := b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/app", 7, "newer title", t2), time.Time{})
	b.WaitStatus(t, e2, "processed")
	e1ID := newID("gh")
	e1 := b.deliver(t, "github", e1ID, "issues", issuePayload("acme/app", 7, "older title", t1), time.Time{})
	b.WaitStatus(t, e1, "processed")

	m := b.mirror(t, "acme/app", 7)
	require.Equal(t, "newer title", m.title)
	require.True(t, m.updatedAt.Equal(t2))
	require.Contains(t, b.log.String(), "stale event passed over", "the stale event never reached the handler")

	// A pull request is an issue on GitHub: same resource, same ordering.
	e3 := b.deliver(t, "github", newID("gh"), "pull_request", pullRequestPayload("acme/app", 7, "merged", true, t2.Add(time.Minute)), time.Time{})
	b.WaitStatus(t, e3, "processed")
	m = b.mirror(t, "acme/app", 7)
	require.Equal(t, mirrorRow{kind: "pull_request", state: "merged", title: "merged", lastDelivery: m.lastDelivery, updatedAt: m.updatedAt}, m)
}

// EveryEvent handlers still see stale events, and are told.
func TestEveryEventHandlerSeesStaleEvents(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	b := setupWith(t, setupOpts{register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.audit", Source: "billing", Events: []string{"audit.event"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(_ context.Context, e *handlers.Event) error {
				mu.Lock()
				defer mu.Unlock()
				seen[e.DeliveryID] = e.Stale
				return nil
			}),
		}))
	}})
	t1 := time.Now().Add(-time.Hour).Truncate(time.Second)
	newer, older := newID("msg"), newID("msg")
	b.WaitStatus(t, b.deliver(t, "billing", newer, "audit.event", standardPayload("audit.event", "res-1", t1.Add(time.Minute)), t1.Add(time.Minute)), "processed")
	b.WaitStatus(t, b.deliver(t, "billing", older, "audit.event", standardPayload("audit.event", "res-1", t1), t1), "processed")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]bool{newer: false, older: true}, seen)
}

// Deliveries for one resource never run at once; different resources run
// in parallel.
func TestResourceSerialisationAndParallelism(t *testing.T) {
	t.Parallel()
	var (
		inside    sync.Map // resource → *atomic.Int32
		maxInside atomic.Int32
		aIn       = make(chan struct{}, 10)
		bIn       = make(chan struct{}, 10)
	)
	b := setupWith(t, setupOpts{register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.slow", Source: "billing", Events: []string{"slow.event"}, Ordering: handlers.EveryEvent,
			Handler: handlers.HandlerFunc(func(_ context.Context, e *handlers.Event) error {
				v, _ := inside.LoadOrStore(e.Resource.Key, new(atomic.Int32))
				n := v.(*atomic.Int32).Add(1)
				defer v.(*atomic.Int32).Add(-1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				// Resource A's first handler waits until B's runs: only
				// possible if different resources run concurrently.
				switch e.Resource.Key {
				case "A":
					aIn <- struct{}{}
					select {
					case <-bIn:
					case <-time.After(5 * time.Second):
						return handlers.Permanent(errors.New("resource B never ran alongside A"))
					}
				case "B":
					bIn <- struct{}{}
					select {
					case <-aIn:
					case <-time.After(5 * time.Second):
						return handlers.Permanent(errors.New("resource A never ran alongside B"))
					}
				}
				time.Sleep(30 * time.Millisecond)
				return nil
			}),
		}))
	}})
	at := time.Now().Truncate(time.Second)
	var ids []int64
	for i := 0; i < 4; i++ {
		ids = append(ids, b.deliver(t, "billing", newID("msg"), "slow.event", standardPayload("slow.event", "A", at), at))
		ids = append(ids, b.deliver(t, "billing", newID("msg"), "slow.event", standardPayload("slow.event", "B", at), at))
	}
	for _, id := range ids {
		b.WaitStatus(t, id, "processed")
	}
	require.Equal(t, int32(1), maxInside.Load(), "never two deliveries of one resource at once")
}
