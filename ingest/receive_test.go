package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/verify"
)

func githubBody(n int) []byte {
	return []byte(fmt.Sprintf(`{"action":"opened","issue":{"number":%d,"title":"Bug"},"repository":{"full_name":"acme/app"}}`, n))
}

func stripeBody(id string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"payment_intent.succeeded","created":1700000000,"data":{"object":{"id":"pi_1"}}}`, id))
}

func standardBody() []byte {
	return []byte(`{"type":"invoice.paid","timestamp":"2024-05-01T10:00:00Z","data":{"id":"inv_1"}}`)
}

func githubHeaders(t *testing.T, secret, id string, body []byte) http.Header {
	return signed(t, verify.ProviderGitHub, secret, body, verify.Message{ID: id, EventType: "issues"}, time.Now())
}

func TestReceiveAcceptedIsStoredWithItsJob(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		ctx := context.Background()

		cases := []struct {
			source, provider, secret string
			body                     []byte
			msg                      verify.Message
			wantID, wantType         string
			wantOccurred             bool
		}{
			{"github", verify.ProviderGitHub, githubSecret, githubBody(1), verify.Message{ID: "gh-accept-1", EventType: "issues"}, "gh-accept-1", "issues", false},
			{"stripe", verify.ProviderStripe, stripeSecret, stripeBody("evt_accept_1"), verify.Message{}, "evt_accept_1", "payment_intent.succeeded", true},
			{"billing", verify.ProviderStandard, standardSecret, standardBody(), verify.Message{ID: "msg_accept_1"}, "msg_accept_1", "invoice.paid", true},
		}
		for _, tc := range cases {
			h := signed(t, tc.provider, tc.secret, tc.body, tc.msg, time.Now())
			h.Set("Authorization", "Bearer proxy-credential")
			h.Set("Cookie", "session=1")
			r := b.post(t, "/webhooks/"+tc.source, tc.body, h)
			require.Equal(t, http.StatusAccepted, r.status, "%s: %s", tc.source, r.raw)
			require.Equal(t, "accepted", r.Status)
			require.Equal(t, tc.source, r.Source)
			require.Equal(t, tc.wantID, r.DeliveryID)
			require.NotZero(t, r.ID)

			// Acked means stored: the row and its job are committed before the 202.
			var (
				payload, sum []byte
				eventType    string
				occurredAt   *time.Time
				status       string
				headers      map[string][]string
				jobs         int
			)
			require.NoError(t, b.pool.QueryRow(ctx, `
				SELECT payload, payload_sha256, event_type, occurred_at, status, headers,
				       (SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND (args->>'inbox_id')::bigint = delivery.id)
				FROM delivery WHERE id = $1 AND source = $2 AND delivery_id = $3`, r.ID, tc.source, tc.wantID).
				Scan(&payload, &sum, &eventType, &occurredAt, &status, &headers, &jobs))
			require.Equal(t, tc.body, payload, "payload is stored byte for byte")
			require.Len(t, sum, 32)
			require.Equal(t, tc.wantType, eventType)
			require.Equal(t, tc.wantOccurred, occurredAt != nil)
			require.Equal(t, "received", status)
			require.Equal(t, 1, jobs)
			require.NotContains(t, headers, "Authorization")
			require.NotContains(t, headers, "Cookie")
			require.NotEmpty(t, headers["Content-Type"])
		}
	})
}

func TestReceiveDuplicateAndConflict(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		body := githubBody(2)

		first := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-dup", body))
		require.Equal(t, http.StatusAccepted, first.status)

		// A provider's retry: same id, same body, fresh signature.
		again := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-dup", body))
		require.Equal(t, http.StatusOK, again.status, "%s", again.raw)
		require.Equal(t, "duplicate", again.Status)
		require.Equal(t, first.ID, again.ID)
		require.Equal(t, counts{1, 1}, b.counts(t))

		other := githubBody(3)
		conflict := b.post(t, "/webhooks/github", other, githubHeaders(t, githubSecret, "gh-dup", other))
		require.Equal(t, http.StatusConflict, conflict.status)
		require.Equal(t, "delivery_id_conflict", conflict.Error.Code)
		require.Equal(t, counts{1, 1}, b.counts(t))
		var stored []byte
		require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT payload FROM inbox WHERE id = $1", first.ID).Scan(&stored))
		require.Equal(t, body, stored, "the stored row is untouched by a conflict")
		// The one write a 4xx makes: the conflicting attempt, outside the
		// inbox, for operators.
		var (
			conflictBody []byte
			inboxID      int64
			sum          []byte
			headers      map[string][]string
		)
		require.NoError(t, b.pool.QueryRow(context.Background(),
			"SELECT body, inbox_id, payload_sha256, headers FROM delivery_conflict WHERE source = 'github' AND delivery_id = 'gh-dup'").
			Scan(&conflictBody, &inboxID, &sum, &headers))
		require.Equal(t, other, conflictBody)
		require.Equal(t, first.ID, inboxID)
		require.Len(t, sum, 32)
		require.Equal(t, []string{"gh-dup"}, headers["X-Github-Delivery"])

		// The same delivery id at another source is another delivery.
		sb := standardBody()
		r := b.post(t, "/webhooks/billing", sb, signed(t, verify.ProviderStandard, standardSecret, sb, verify.Message{ID: "gh-dup"}, time.Now()))
		require.Equal(t, http.StatusAccepted, r.status)
	})
}

func TestReceiveRejectsAndWritesNothing(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		now := time.Now()
		gh := githubBody(4)
		st := stripeBody("evt_reject")
		sw := standardBody()

		without := func(h http.Header, name string) http.Header {
			h = h.Clone()
			h.Del(name)
			return h
		}
		ghOK := githubHeaders(t, githubSecret, "gh-reject", gh)
		stOK := signed(t, verify.ProviderStripe, stripeSecret, st, verify.Message{}, now)
		swOK := signed(t, verify.ProviderStandard, standardSecret, sw, verify.Message{ID: "msg_reject"}, now)
		ghForm := []byte("payload=%7B%7D")

		cases := []struct {
			name       string
			path       string
			body       []byte
			header     http.Header
			wantStatus int
			wantCode   string
		}{
			{"unknown source", "/webhooks/nope", gh, ghOK, 404, "unknown_source"},
			{"path trick", "/webhooks/..%2Fgithub", gh, ghOK, 404, "unknown_source"},
			{"github missing delivery", "/webhooks/github", gh, without(ghOK, "X-GitHub-Delivery"), 400, "missing_header"},
			{"github missing event", "/webhooks/github", gh, without(ghOK, "X-GitHub-Event"), 400, "missing_header"},
			{"github missing signature", "/webhooks/github", gh, without(ghOK, "X-Hub-Signature-256"), 400, "missing_header"},
			{"github form body", "/webhooks/github", ghForm, githubHeaders(t, githubSecret, "gh-form", ghForm), 400, "invalid_payload"},
			{"github wrong secret", "/webhooks/github", gh, githubHeaders(t, "not-the-secret", "gh-reject", gh), 401, "invalid_signature"},
			{"github signature of another body", "/webhooks/github", gh, githubHeaders(t, githubSecret, "gh-reject", githubBody(5)), 401, "invalid_signature"},
			{"stripe missing signature", "/webhooks/stripe", st, without(stOK, "Stripe-Signature"), 400, "missing_header"},
			{"stripe wrong secret", "/webhooks/stripe", st, signed(t, verify.ProviderStripe, "whsec_other", st, verify.Message{}, now), 401, "invalid_signature"},
			{"stripe too old", "/webhooks/stripe", st, signed(t, verify.ProviderStripe, stripeSecret, st, verify.Message{}, now.Add(-10*time.Minute)), 401, "timestamp_out_of_tolerance"},
			{"stripe from the future", "/webhooks/stripe", st, signed(t, verify.ProviderStripe, stripeSecret, st, verify.Message{}, now.Add(10*time.Minute)), 401, "timestamp_out_of_tolerance"},
			{"stripe no id", "/webhooks/stripe", []byte(`{"type":"x"}`), signed(t, verify.ProviderStripe, stripeSecret, []byte(`{"type":"x"}`), verify.Message{}, now), 400, "invalid_payload"},
			{"stripe not json", "/webhooks/stripe", []byte(`nope`), signed(t, verify.ProviderStripe, stripeSecret, []byte(`nope`), verify.Message{}, now), 400, "invalid_payload"},
			{"standard missing id", "/webhooks/billing", sw, without(swOK, "Webhook-Id"), 400, "missing_header"},
			{"standard too old", "/webhooks/billing", sw, signed(t, verify.ProviderStandard, standardSecret, sw, verify.Message{ID: "msg_old"}, now.Add(-time.Hour)), 401, "timestamp_out_of_tolerance"},
			{"standard no type", "/webhooks/billing", []byte(`{}`), signed(t, verify.ProviderStandard, standardSecret, []byte(`{}`), verify.Message{ID: "msg_notype"}, now), 400, "invalid_payload"},
			{"body over limit", "/webhooks/github", bytes.Repeat([]byte("x"), maxBody+1), ghOK, 413, "payload_too_large"},
		}
		for _, tc := range cases {
			r := b.post(t, tc.path, tc.body, tc.header)
			require.Equal(t, tc.wantStatus, r.status, "%s: %s", tc.name, r.raw)
			require.Equal(t, tc.wantCode, r.Error.Code, tc.name)
			require.NotEmpty(t, r.Error.Message, tc.name)
			if tc.wantStatus == http.StatusRequestEntityTooLarge {
				require.Equal(t, fmt.Sprintf("the body is %d bytes, over max_body_bytes (%d bytes)", maxBody+1, maxBody), r.Error.Message)
			}
			require.Equal(t, counts{0, 0}, b.counts(t), "%s wrote something", tc.name)
		}
	})
}

func TestReceiveSecretRotation(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		for i, secret := range []string{githubSecret, githubOldSecret} {
			body := githubBody(10 + i)
			r := b.post(t, "/webhooks/github", body, githubHeaders(t, secret, fmt.Sprintf("gh-rot-%d", i), body))
			require.Equal(t, http.StatusAccepted, r.status, "secret %d: %s", i, r.raw)
		}
	})
}

// The same delivery reaching several replicas at once: the unique
// constraint, not a prior SELECT, picks one winner.
func TestReceiveConcurrentDuplicatesYieldOneRowAndOneJob(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		// Every insert statement waits a moment after taking its snapshot,
		// so the others have all started before the first commits: a
		// look-up before the insert would see nothing and collide on the
		// unique index, however fast the machine.
		_, err := b.pool.Exec(context.Background(), `CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN PERFORM pg_sleep(0.2); RETURN NULL; END $$;
			CREATE TRIGGER slow_insert BEFORE INSERT ON inbox FOR EACH STATEMENT EXECUTE FUNCTION slow_insert();`)
		require.NoError(t, err)
		const n = 25
		body := githubBody(20)
		h := githubHeaders(t, githubSecret, "gh-race", body)

		var (
			wg       sync.WaitGroup
			start    = make(chan struct{})
			statuses = make([]int, n)
			ids      = make([]int64, n)
		)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := b.post(t, "/webhooks/github", body, h)
				statuses[i], ids[i] = r.status, r.ID
			}()
		}
		close(start)
		wg.Wait()

		accepted := 0
		for i := range statuses {
			require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, statuses[i])
			require.Equal(t, ids[0], ids[i], "every answer names the same row")
			if statuses[i] == http.StatusAccepted {
				accepted++
			}
		}
		require.Equal(t, 1, accepted)
		require.Equal(t, counts{1, 1}, b.counts(t))
	})
}

func TestReceiveDatabaseUnreachableIs503(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, setupOpts{pool: unreachablePool(t), batchWindow: opts.batchWindow})
		body := githubBody(30)
		r := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-down", body))
		require.Equal(t, http.StatusServiceUnavailable, r.status)
		require.Equal(t, "unavailable", r.Error.Code)
		require.NotEmpty(t, r.header.Get("Retry-After"))
	})
}

// If the job cannot be enqueued, the inbox row must not survive either:
// they share one transaction.
func TestReceiveJobInsertFailureRollsBackTheRow(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		ctx := context.Background()
		_, err := b.pool.Exec(ctx, `CREATE FUNCTION refuse_job() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION 'queue refuses'; END $$;
			CREATE TRIGGER refuse_job BEFORE INSERT ON river_job FOR EACH ROW EXECUTE FUNCTION refuse_job();`)
		require.NoError(t, err)

		body := githubBody(31)
		r := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-nojob", body))
		require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.raw)
		require.Equal(t, counts{0, 0}, b.counts(t))

		// Once the queue works again the provider's retry is accepted as new.
		_, err = b.pool.Exec(ctx, "DROP TRIGGER refuse_job ON river_job")
		require.NoError(t, err)
		r = b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-nojob", body))
		require.Equal(t, http.StatusAccepted, r.status)
		require.Equal(t, counts{1, 1}, b.counts(t))
	})
}

func TestReceiveResponseShape(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		body := githubBody(40)
		r := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, "gh-shape", body))
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.raw, &m))
		require.ElementsMatch(t, []string{"id", "source", "delivery_id", "status"}, keys(m))

		r = b.post(t, "/webhooks/nope", body, nil)
		m = nil
		require.NoError(t, json.Unmarshal(r.raw, &m))
		require.ElementsMatch(t, []string{"error"}, keys(m))
	})
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
