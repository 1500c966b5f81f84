package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/verify"
)

// replayableProviders are the senders whose signature covers neither the
// delivery id nor a time.
var replayableProviders = []string{"github", "gitlab", "shopify", "razorpay", "bitbucket"}

// dedupSources is one source per replayable provider, deduplicating bodies
// as serve sets it up for them.
func dedupSources(t *testing.T) []ingest.Source {
	var out []ingest.Source
	for _, p := range replayableProviders {
		require.True(t, verify.SignatureCovers(p, nil).ReplayableUnderNewID(), p)
		secret := presetSecret(p)
		if p == "github" {
			secret = githubSecret
		}
		v, err := verify.New(verify.Config{Provider: p, Secrets: []string{secret}})
		require.NoError(t, err, p)
		out = append(out, ingest.Source{Name: "dedup-" + p, Provider: p, Verifier: v, DedupBodies: true}) // DedupBodiesByType left out: NewServer derives it from the provider.

	}
	return out
}

// capture signs body as p's sender does for delivery id.
func capture(t *testing.T, p, id string, body []byte) http.Header {
	t.Helper()
	secret := presetSecret(p)
	if p == "github" {
		secret = githubSecret
	}
	s, err := verify.NewConfigSigner(verify.Config{Provider: p, Secrets: []string{secret}})
	require.NoError(t, err, p)
	h, err := s.Sign(body, verify.Message{ID: id, EventType: "thing.happened"}, time.Now())
	require.NoError(t, err, p)
	return h
}

// withFreshID is what an attacker holding the captured request h sends:
// the same headers, signature included, with every header that carries the
// delivery id set to fresh.
func withFreshID(h http.Header, id, fresh string) http.Header {
	out := h.Clone()
	for k, vs := range out {
		for i, v := range vs {
			vs[i] = strings.ReplaceAll(v, id, fresh)
		}
		out[k] = vs
	}
	return out
}

// A captured request of a sender that signs neither its id nor a time,
// posted again under a fresh id, is a duplicate of the original: 200,
// "duplicate_of" it, one row. Shopify's same body under another topic
// (orders/create, then orders/updated), or a source that does not dedupe
// bodies, stores a new delivery.
func TestBodyReplayedUnderAFreshIDIsADuplicate(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		opts.sources = append(dedupSources(t), presetSources(t, []string{"shopify"})...) // "shopify": no dedup
		b := setupWith(t, opts)
		body := []byte(`{"id":"r_1","event":"thing.happened","topic":"thing.happened","event_type":"thing.happened","data":{"id":"r_1"}}`)
		for _, p := range replayableProviders {
			path := "/webhooks/dedup-" + p
			h := capture(t, p, "dlv-orig-"+p, body)
			first := b.post(t, path, body, h)
			require.Equal(t, http.StatusAccepted, first.status, "%s: %s", p, first.raw)

			replay := b.post(t, path, body, withFreshID(h, "dlv-orig-"+p, "dlv-fresh-"+p))
			require.Equal(t, http.StatusOK, replay.status, "%s: %s", p, replay.raw)
			require.Equal(t, "duplicate", replay.Status, p)
			require.Equal(t, first.ID, replay.ID, p)
			require.Contains(t, string(replay.raw), fmt.Sprintf(`"duplicate_of":%q`, first.DeliveryID), p)
		}
		require.Equal(t, len(replayableProviders), b.counts(t).inbox)

		// Shopify sends one body under several topics: another topic is
		// another event.
		h := capture(t, "shopify", "dlv-other-type", body)
		h.Set("X-Shopify-Topic", "orders/updated")
		require.Equal(t, http.StatusAccepted, b.post(t, "/webhooks/dedup-shopify", body, h).status)
		// A source that does not dedupe bodies takes the fresh id as new.
		h = capture(t, "shopify", "dlv-plain-1", body)
		require.Equal(t, http.StatusAccepted, b.post(t, "/webhooks/shopify", body, h).status)
		require.Equal(t, http.StatusAccepted, b.post(t, "/webhooks/shopify", body, withFreshID(h, "dlv-plain-1", "dlv-plain-2")).status)
		require.Equal(t, len(replayableProviders)+3, b.counts(t).inbox)
	})
}

// The event type of GitHub and GitLab is an unsigned header: a captured
// request replayed under fresh ids and event types of the replayer's
// choosing is the original event still, a duplicate that stores and
// enqueues nothing (a route taking every event would otherwise send each
// copy on under a webhook-id of its own).
func TestBodyReplayedUnderAnotherUnsignedTypeIsADuplicate(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		opts.sources = dedupSources(t)
		b := setupWith(t, opts)
		body := []byte(`{"action":"created","deployment_status":{"id":42,"state":"success"}}`)
		for p, typeHeader := range map[string]string{"github": "X-GitHub-Event", "gitlab": "X-Gitlab-Event"} {
			require.False(t, verify.DedupBodyByType(p, nil), p)
			path := "/webhooks/dedup-" + p
			h := capture(t, p, "dlv-orig-"+p, body)
			h.Set(typeHeader, "deployment_status")
			first := b.post(t, path, body, h)
			require.Equal(t, http.StatusAccepted, first.status, "%s: %s", p, first.raw)
			before := b.counts(t)
			for i, typ := range []string{"deployment", "x-replay-1", "x-replay-2"} {
				replay := withFreshID(h, "dlv-orig-"+p, fmt.Sprintf("dlv-fresh-%s-%d", p, i))
				replay.Set(typeHeader, typ)
				got := b.post(t, path, body, replay)
				require.Equal(t, http.StatusOK, got.status, "%s %s: %s", p, typ, got.raw)
				require.Equal(t, "duplicate", got.Status, p)
				require.Equal(t, first.ID, got.ID, p)
				require.Contains(t, string(got.raw), fmt.Sprintf(`"duplicate_of":%q`, first.DeliveryID), p)
			}
			require.Equal(t, before, b.counts(t), "%s: nothing stored, nothing enqueued", p)
		}
	})
}

// Copies of one body under many fresh ids, sent at once (in one batch or
// racing transactions): the unique constraint lets exactly one in.
func TestBodyReplaysRacingAreOneDelivery(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		opts.sources = dedupSources(t)
		b := setupWith(t, opts)
		body := []byte(`{"action":"opened","issue":{"number":7}}`)
		h := capture(t, "github", "dlv-race-0", body)
		const n = 12
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				statuses[i] = b.post(t, "/webhooks/dedup-github", body, withFreshID(h, "dlv-race-0", fmt.Sprintf("dlv-race-%d", i+1))).status
			})
		}
		wg.Wait()
		accepted := 0
		for _, s := range statuses {
			require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, s)
			if s == http.StatusAccepted {
				accepted++
			}
		}
		require.Equal(t, 1, accepted, "%v", statuses)
		c := b.counts(t)
		require.Equal(t, 1, c.inbox)
		require.Equal(t, 1, c.jobs)
		var rows int
		require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT count(*) FROM inbox WHERE body_key IS NOT NULL").Scan(&rows))
		require.Equal(t, 1, rows)
	})
}

// Twilio signs its form's parameters sorted, not the bytes sent: the same
// signature verifies the captured body reordered or re-encoded. Every such
// variant under a fresh idempotency token is a duplicate of the original.
func TestTwilioBodyReorderedUnderAFreshIDIsADuplicate(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		url := presetURL + "sms"
		v, err := verify.New(verify.Config{Provider: "twilio", Secrets: []string{"twilio-test-secret"}, NotificationURL: url})
		require.NoError(t, err)
		opts.sources = []ingest.Source{{Name: "sms", Provider: "twilio", Verifier: v, DedupBodies: true}}
		b := setupWith(t, opts)
		s, err := verify.NewConfigSigner(verify.Config{Provider: "twilio", Secrets: []string{"twilio-test-secret"}, NotificationURL: url})
		require.NoError(t, err)
		body := []byte("MessageSid=SM1&From=%2B15550001&To=%2B15550002&Body=pay+now")
		h, err := s.Sign(body, verify.Message{ID: "tok-orig", EventType: "message"}, time.Now())
		require.NoError(t, err)
		first := b.post(t, "/webhooks/sms", body, h)
		require.Equal(t, http.StatusAccepted, first.status, "%s", first.raw)
		for i, variant := range []string{
			"To=%2B15550002&Body=pay+now&MessageSid=SM1&From=%2B15550001",
			"MessageSid=SM%31&From=%2b15550001&To=%2B15550002&Body=pay%20now&",
		} {
			replay := b.post(t, "/webhooks/sms", []byte(variant), withFreshID(h, "tok-orig", fmt.Sprintf("tok-fresh-%d", i)))
			require.Equal(t, http.StatusOK, replay.status, "%s: %s", variant, replay.raw)
			require.Equal(t, first.ID, replay.ID)
		}
		require.Equal(t, 1, b.counts(t).inbox)
	})
}
