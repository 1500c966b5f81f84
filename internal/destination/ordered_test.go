package destination_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// setupOrderedWide is a patient destination on an ordered route with room
// for 20 requests at once, so only the order keeps one resource's sends
// from going together.
func setupOrderedWide(t *testing.T) *bundle {
	return setupWith(t, setupOpts{route: func(r *config.Route) { r.Ordered = true }, dest: func(d *config.Destination) {
		patient(d)
		d.MaxInFlight = 20
	}})
}

// Ordered: for one (destination, resource) the next send goes only after
// the previous one is done, so under shuffled arrival each resource's
// events reach the destination in the order they were processed, one at a
// time, while different resources flow in parallel. Events processed
// after a newer one of their resource are sent marked stale.
func TestOrderedSendsOneResourceAtATime(t *testing.T) {
	t.Parallel()
	b := setupOrderedWide(t)
	b.recv.SetFallback(receiver.Action{Delay: 5 * time.Millisecond})
	const resources, perResource = 50, 4
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	type ev struct {
		resource string
		n        int
	}
	var evs []ev
	for r := range resources {
		for n := range perResource {
			evs = append(evs, ev{fmt.Sprintf("res_%02d", r), n})
		}
	}
	rand.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	ids := make([]string, len(evs))
	var wg sync.WaitGroup
	for i, e := range evs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], _ = b.deliver(t, "invoice.updated", e.resource, base.Add(time.Duration(e.n)*time.Minute))
		}()
	}
	wg.Wait()
	for _, id := range ids {
		b.waitSend(t, id, "succeeded")
	}

	// Per resource, what the destination got: in the order processed, one
	// at a time (each request began after the previous one's answer).
	type got struct {
		at    time.Time
		n     int
		stale bool
	}
	byRes := map[string][]got{}
	for _, r := range b.recv.Requests() {
		var body struct {
			Timestamp time.Time           `json:"timestamp"`
			Data      struct{ ID string } `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		byRes[body.Data.ID] = append(byRes[body.Data.ID], got{r.At, int(body.Timestamp.Sub(base) / time.Minute), r.Header.Get("Hookinbox-Stale") == "true"})
	}
	require.Len(t, byRes, resources)
	staleSeen := 0
	for res, gs := range byRes {
		require.Len(t, gs, perResource, res)
		newest := -1
		for i, g := range gs {
			if i > 0 {
				require.GreaterOrEqual(t, g.at.Sub(gs[i-1].at), 5*time.Millisecond, "%s: one at a time", res)
			}
			require.Equal(t, g.n < newest, g.stale, "%s: stale exactly when older than what was sent before", res)
			newest = max(newest, g.n)
			if g.stale {
				staleSeen++
			}
		}
	}
	require.Greater(t, b.recv.MaxInFlight(), 1, "different resources in parallel")
	t.Logf("stale sends: %d of %d", staleSeen, len(evs))
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_resource WHERE busy"))
}

// A send that arrives while its resource's turn has just been handed on
// waits for the send in progress: the turn stays taken as it passes from
// one send to the next, and the newcomer's processing finds it so.
func TestAnOrderedSendArrivingMidChainWaitsItsTurn(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: patient, route: func(r *config.Route) { r.Ordered = true }})
	const hold = 300 * time.Millisecond
	b.recv.SetFallback(receiver.Action{Delay: hold})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	first, _ := b.deliver(t, "invoice.updated", "inv_mid", base)
	second, _ := b.deliver(t, "invoice.updated", "inv_mid", base.Add(time.Minute))
	b.waitSend(t, first, "succeeded")
	// The second send is in flight for hold now; the third arrives.
	third, _ := b.deliver(t, "invoice.updated", "inv_mid", base.Add(2*time.Minute))
	for _, id := range []string{second, third} {
		b.waitSend(t, id, "succeeded")
	}
	reqs := b.recv.Requests()
	require.Len(t, reqs, 3)
	for i := 1; i < len(reqs); i++ {
		require.GreaterOrEqual(t, reqs[i].At.Sub(reqs[i-1].At), hold, "request %d began before the one before it was answered", i)
	}
	require.Equal(t, 1, b.recv.MaxInFlight())
}

// setupOrderedOneRetry is a patient destination on an ordered route whose
// send fails for good at its second failure, its circuit left closed.
func setupOrderedOneRetry(t *testing.T) *bundle {
	return setupWith(t, setupOpts{route: func(r *config.Route) { r.Ordered = true }, dest: func(d *config.Destination) {
		patient(d)
		d.Retry = config.Retry{Schedule: schedule(20 * time.Millisecond)}
		d.Circuit.Failures = 100
	}})
}

// An operator's retry of a failed ordered send puts it back in its
// resource's line: it waits for the send in progress, never goes beside
// it.
func TestARetriedOrderedSendWaitsForTheSendInProgress(t *testing.T) {
	t.Parallel()
	b := setupOrderedOneRetry(t)
	const hold = 500 * time.Millisecond
	b.recv.Script(receiver.Fail, receiver.Fail)
	b.recv.SetFallback(receiver.Action{Delay: hold})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	failed, _ := b.deliver(t, "invoice.updated", "inv_r", base)
	require.Equal(t, "failed", b.waitSend(t, failed, "succeeded", "failed"))
	next, _ := b.deliver(t, "invoice.updated", "inv_r", base.Add(time.Minute))
	require.Eventually(t, func() bool { return len(b.recv.Requests()) == 3 }, 10*time.Second, 5*time.Millisecond,
		"the next send's request never began")

	require.Equal(t, 1, b.retryFailed(t))
	for _, id := range []string{next, failed} {
		require.Equal(t, "succeeded", b.waitSend(t, id, "succeeded"))
	}
	reqs := b.recv.Requests()
	require.Len(t, reqs, 4)
	require.GreaterOrEqual(t, reqs[3].At.Sub(reqs[2].At), hold, "the retried send began before the one in progress was answered")
	require.Equal(t, 1, b.recv.MaxInFlight())
}

// skip_stale: an event older than what the destination got is not sent.
func TestSkipStaleDoesNotSendOlderEvents(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{dest: patient, route: func(r *config.Route) { r.Ordered, r.SkipStale = true, true }})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	newer, _ := b.deliver(t, "invoice.updated", "inv_s", base.Add(time.Minute))
	require.Equal(t, "succeeded", b.waitSend(t, newer, "succeeded"))
	older, _ := b.deliver(t, "invoice.updated", "inv_s", base)
	require.Equal(t, "skipped", b.waitSend(t, older, "succeeded", "skipped"))
	require.Len(t, b.recv.Requests(), 1)
}

// A dead destination delays nothing else: processing finishes and another
// destination's sends are made while the dead one's still wait for their
// retry, each tried once and failed.
func TestDeadDestinationDoesNotHoldUpOthers(t *testing.T) {
	t.Parallel()
	live := receiver.New(t, "")
	b := setupWith(t, setupOpts{
		dest: func(d *config.Destination) {
			d.URL = "http://127.0.0.1:1/dead"
			d.MaxInFlight = 2
			// Far beyond the test: its sends stay unfinished throughout.
			d.Retry = config.Retry{Schedule: schedule(time.Hour)}
			d.Circuit.Failures = 100
		},
		extra: []config.Destination{{Name: "live", URL: live.URL, Timeout: config.Duration(10 * time.Second)}},
		route: func(r *config.Route) { r.To = []string{"app", "live"} },
	})
	const n = 20
	for i := range n {
		b.deliver(t, "invoice.paid", fmt.Sprintf("inv_d%d", i), time.Now())
	}
	require.Eventually(t, func() bool { return len(live.Effects()) == n }, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM delivery WHERE status = 'processed'") == n
	}, 20*time.Second, 20*time.Millisecond, "processing waits for no send")
	// The dead destination was really sent to: every one of its sends was
	// tried, got no answer, and waits.
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(DISTINCT s.id) FROM destination_send s JOIN destination_attempt a ON a.send_id = s.id
			WHERE s.destination = 'app' AND a.status IS NULL`) == n
	}, 20*time.Second, 20*time.Millisecond, "every send to the dead destination tried")
	require.Equal(t, n, b.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'app' AND state = 'pending'"),
		"the dead destination's sends all wait for their retry")
	// The live receiver answers before its sender records the answer.
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE destination = 'live' AND state = 'succeeded'") == n
	}, 20*time.Second, 20*time.Millisecond, "every send to the live destination recorded succeeded")
}

// Sends of one resource that the sender finds together, as a backlog
// leaves them, are still sent one at a time and in order: only the
// oldest of them takes the resource's turn, and the others wait behind it
// in its line.
func TestSendsOfOneResourceFoundTogetherGoOneAtATime(t *testing.T) {
	t.Parallel()
	b := setupOrderedWide(t)
	b.recv.SetFallback(receiver.Action{Delay: 30 * time.Millisecond})
	id, inboxID := b.deliver(t, "invoice.updated", "inv_first", time.Now())
	b.waitSend(t, id, "succeeded")

	// Ten sends of another resource, committed at once and not yet in
	// line, so one claim of the sender lines them all up.
	const together = 10
	_, err := b.pool.Exec(context.Background(), `
		INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
		                              resource_key, event_at, event_received_at, at_is_receipt, state, in_line)
		SELECT 'app', 'billing', 'together_' || g, $1, 'invoice.updated', 'hkb_together_' || g, true, false,
		       'inv_together', now() + g * interval '1 second', now(), false, 'waiting', false
		FROM generate_series(1, $2::int) g`, inboxID, together)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return b.count(t, "SELECT count(*) FROM destination_send WHERE state = 'succeeded'") == together+1
	}, 20*time.Second, 10*time.Millisecond)
	reqs := b.recv.Requests()
	require.Len(t, reqs, together+1)
	require.Equal(t, 1, b.recv.MaxInFlight(), "one request at a time")
	// Oldest first, each newer than the one before: none stale.
	for g, r := range reqs[1:] {
		require.Equal(t, fmt.Sprintf("hkb_together_%d", g+1), r.WebhookID, "request %d", g+1)
		require.Empty(t, r.Header.Get("Hookinbox-Stale"), "request %d marked stale", g+1)
	}
	require.Zero(t, b.count(t, "SELECT count(*) FROM destination_resource WHERE busy"))
}
