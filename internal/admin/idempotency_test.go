package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
)

func TestIdempotencyKeyContract(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-idem-1", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	key := map[string]string{"Idempotency-Key": "replay-once"}

	// 1. The first request runs.
	first := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusAccepted, first.status, "%s", first.body)
	require.Empty(t, first.header.Get("Idempotent-Replayed"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))

	// 2. The same request again: the stored answer, byte for byte, and
	//    nothing new happens.
	again := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, first.status, again.status)
	require.Equal(t, first.body, again.body)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Regexp(t, `^/admin/replays/\d+$`, first.header.Get("Location"))
	require.Equal(t, first.header.Get("Location"), again.header.Get("Location"), "the stored answer's Location")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))

	// 3. The same key on a different request.
	other := b.deliver(t, "github", "gh-idem-2", "push", `{}`)
	r := b.do(t, http.MethodPost, fmt.Sprintf("/admin/deliveries/%d/replay", other), "", key)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Equal(t, "idempotency_key_reused", r.errorCode(t))
	r = b.do(t, http.MethodPost, path+"?since=2026-11-29T00:00:00Z", "", key)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "another query is another request")
	require.Equal(t, "idempotency_key_reused", r.errorCode(t))

	// 4. No key: not deduplicated.
	for i := 0; i < 2; i++ {
		r := b.do(t, http.MethodPost, path, "", nil)
		require.Equal(t, http.StatusAccepted, r.status)
	}
	require.Equal(t, 3, b.count(t, "SELECT count(*) FROM replay"))

	// 5. A key longer than 255 bytes; one of 255 is a key.
	r = b.do(t, http.MethodPost, path, "", map[string]string{"Idempotency-Key": strings.Repeat("k", 256)})
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "invalid_idempotency_key", r.errorCode(t))
	require.Equal(t, 3, b.count(t, "SELECT count(*) FROM replay"))
	r = b.do(t, http.MethodPost, path, "", map[string]string{"Idempotency-Key": strings.Repeat("k", 255)})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	require.Equal(t, 4, b.count(t, "SELECT count(*) FROM replay"))
}

// Equal JSON bodies with other key order or spacing are the same request.
func TestIdempotencyCanonicalBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := map[string]string{"Idempotency-Key": "bulk-1"}
	first := b.do(t, http.MethodPost, "/admin/bulk-replays", `{"status":"failed","limit":10}`, key)
	require.Equal(t, http.StatusAccepted, first.status, "%s", first.body)
	again := b.do(t, http.MethodPost, "/admin/bulk-replays", "{ \"limit\": 10,\n \"status\": \"failed\" }", key)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, first.body, again.body)
	require.Regexp(t, `^/admin/bulk-replays/\d+$`, first.header.Get("Location"))
	require.Equal(t, first.header.Get("Location"), again.header.Get("Location"), "the stored answer's Location")
	r := b.do(t, http.MethodPost, "/admin/bulk-replays", `{"status":"failed","limit":11}`, key)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	// Only whitespace may follow the JSON value: with more after it, the
	// body is another request (one the route refuses), not a retry.
	r = b.do(t, http.MethodPost, "/admin/bulk-replays", `{"status":"failed","limit":10} {"limit":1}`, key)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	require.Equal(t, "idempotency_key_reused", r.errorCode(t))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM bulk_replay"))
}

// A key still held by a running request: 409 with Retry-After. Once its
// lock expires (the holder died between claiming the key and finishing),
// the next retry takes it over and runs.
func TestIdempotencyInProgressAndTakeover(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id := b.deliver(t, "github", "gh-idem-3", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	key := map[string]string{"Idempotency-Key": "crashed"}

	// Claim the key exactly as the server does, then "crash": the row stays
	// in_progress with a live lock.
	first := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusAccepted, first.status)
	_, err := b.pool.Exec(ctx, `UPDATE api_idempotency SET state = 'in_progress', status_code = NULL,
		response_body = NULL, lock_token = 'dead-pod', locked_until = now() + interval '1 minute'`)
	require.NoError(t, err)

	r := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusConflict, r.status)
	require.Equal(t, "request_in_progress", r.errorCode(t))
	require.NotEmpty(t, r.header.Get("Retry-After"))

	_, err = b.pool.Exec(ctx, "UPDATE api_idempotency SET locked_until = now() - interval '1 second'")
	require.NoError(t, err)
	r = b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusAccepted, r.status, "the retry took over: %s", r.body)
	require.Empty(t, r.header.Get("Idempotent-Replayed"))
	again := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, r.body, again.body, "and its answer is what the key now stores")
}

func TestIdempotencyExpiredKeyRunsAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-idem-4", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	key := map[string]string{"Idempotency-Key": "old"}
	require.Equal(t, http.StatusAccepted, b.do(t, http.MethodPost, path, "", key).status)
	_, err := b.pool.Exec(context.Background(), "UPDATE api_idempotency SET expires_at = now() - interval '1 second'")
	require.NoError(t, err)
	r := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusAccepted, r.status)
	require.Empty(t, r.header.Get("Idempotent-Replayed"))
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM replay"))
}

// Many concurrent requests with one key: exactly one runs; the others get
// the stored answer or 409 while it runs.
func TestIdempotencyConcurrentRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-idem-5", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	const n = 12
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		statuses = make([]int, n)
		replayed = make([]bool, n)
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := b.do(t, http.MethodPost, path, "", map[string]string{"Idempotency-Key": "race"})
			statuses[i], replayed[i] = r.status, r.header.Get("Idempotent-Replayed") == "true"
		}()
	}
	close(start)
	wg.Wait()
	ran := 0
	for i := range statuses {
		switch {
		case statuses[i] == http.StatusAccepted && !replayed[i]:
			ran++
		case statuses[i] == http.StatusAccepted && replayed[i], statuses[i] == http.StatusConflict:
		default:
			t.Fatalf("unexpected status %d", statuses[i])
		}
	}
	require.Equal(t, 1, ran)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))
}

// A client error is remembered like a success (the same request would get
// the same answer); a failure on our side is not, so the retry runs.
func TestIdempotencyStoresClientErrorsNotServerErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := map[string]string{"Idempotency-Key": "missing"}
	r := b.do(t, http.MethodPost, "/admin/deliveries/999999/replay", "", key)
	require.Equal(t, http.StatusNotFound, r.status)
	again := b.do(t, http.MethodPost, "/admin/deliveries/999999/replay", "", key)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, r.body, again.body)

	// Break the replay table so the operation fails on our side.
	_, err := b.pool.Exec(context.Background(), "ALTER TABLE replay RENAME TO replay_broken")
	require.NoError(t, err)
	id := b.deliver(t, "github", "gh-idem-6", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	key = map[string]string{"Idempotency-Key": "server-error"}
	r = b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	require.Zero(t, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND (args->>'inbox_id')::bigint = $1 AND id > (SELECT min(id) FROM river_job WHERE (args->>'inbox_id')::bigint = $1)", id),
		"the failed operation enqueued nothing")
	_, err = b.pool.Exec(context.Background(), "ALTER TABLE replay_broken RENAME TO replay")
	require.NoError(t, err)
	r = b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, http.StatusAccepted, r.status, "the key was released, so the retry ran")
}

// An Idempotency-Key belongs to the token that sent it: another token's
// request under the same key runs as its own, and is never answered with
// the first token's stored response.
func TestIdempotencyKeysArePerToken(t *testing.T) {
	t.Parallel()
	b, _ := setupScopes(t)
	id := b.deliver(t, "github", "gh-idem-tokens", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)

	oncall := b.do(t, http.MethodPost, path, "", map[string]string{"Authorization": "Bearer " + operateToken, "Idempotency-Key": "shared-key"})
	require.Equal(t, http.StatusAccepted, oncall.status, "%s", oncall.body)
	other := b.do(t, http.MethodPost, path, "", map[string]string{"Idempotency-Key": "shared-key"})
	require.Equal(t, http.StatusAccepted, other.status, "%s", other.body)
	require.Empty(t, other.header.Get("Idempotent-Replayed"), "not the other token's stored answer")
	require.NotEqual(t, oncall.body, other.body)
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM replay"))
}

// A key that a release fingerprinting the path as spelled stored is still
// the same request when retried after an upgrade: the stored answer, not
// 422.
func TestIdempotencyKeyStoredByAnOlderReleaseStillMatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-idem-older", "push", `{}`)
	path := fmt.Sprintf("/admin/deliveries/%d/replay", id)
	scope := sha256.Sum256([]byte(token))
	spelled := sha256.Sum256([]byte("POST\n" + path + "\n\n"))
	stored := fmt.Sprintf(`{"replay_id":4242,"id":%d,"source":"github","delivery_id":"gh-idem-older","job_id":7,"job_state":"available","bulk_replay_id":null,"requested_at":"2026-01-02T03:04:05Z"}`, id)
	_, err := b.pool.Exec(context.Background(), `INSERT INTO api_idempotency
		(scope, operation, idempotency_key, request_hash, state, status_code, response_body, expires_at)
		VALUES ($1, 'replay_delivery', 'replay-older', $2, 'completed', 202, $3, now() + interval '1 hour')`,
		"token:"+hex.EncodeToString(scope[:8]), spelled[:], []byte(stored))
	require.NoError(t, err)
	r := b.do(t, http.MethodPost, path, "", map[string]string{"Idempotency-Key": "replay-older"})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
	require.Equal(t, "/admin/replays/4242", r.header.Get("Location"))
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM replay"))
}

// The router ignores a path's case and a trailing slash, and so does the
// request's fingerprint: a retry that spells the path otherwise is the
// same request and gets the stored answer, not 422. (Sent past the
// document's validation, whose paths are exact.)
func TestIdempotencyKeyIgnoresThePathsSpelling(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.deliver(t, "github", "gh-idem-case", "push", `{}`)
	post := func(path string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, b.baseURL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Idempotency-Key", "replay-spelled")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Idempotent-Replayed")
	}
	status, replayed := post(fmt.Sprintf("/admin/deliveries/%d/replay", id))
	require.Equal(t, http.StatusAccepted, status)
	require.Empty(t, replayed)
	for _, path := range []string{"/admin/Deliveries/%d/REPLAY", "/admin/deliveries/%d/replay/"} {
		status, replayed = post(fmt.Sprintf(path, id))
		require.Equal(t, http.StatusAccepted, status, path)
		require.Equal(t, "true", replayed, path)
	}
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM replay"))
}

// A request that outlives its key's lock loses the key: the retry that
// took it over gives the answer, and the slow original, once it ends,
// stores nothing and answers 409, so the work is not done twice over the
// key.
func TestIdempotencyRequestThatOutlivesItsLockAnswers409(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	release := make(chan struct{})
	b := setupWith(t, setupOpts{cfg: func(c *admin.Config) {
		c.IdempotencyLock = time.Second
		c.Redeliver = map[string]admin.Recovery{"github": func(context.Context, time.Time) (any, error) {
			if calls.Add(1) == 1 {
				<-release
			}
			// redeliver.Result's shape, which the OpenAPI document holds it to.
			return map[string]any{"examined": 1, "failed": 1, "already_in_inbox": 0, "redelivered": int(calls.Load()), "errors": []string{}}, nil
		}}
	}})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server's shutdown, which waits for the slow request
	key := map[string]string{"Idempotency-Key": "slow"}
	const path = "/admin/sources/github/redeliver"

	slow := make(chan response, 1)
	go func() { slow <- b.do(t, http.MethodPost, path, "", key) }()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
	var retry response
	require.Eventually(t, func() bool {
		retry = b.do(t, http.MethodPost, path, "", key)
		return retry.status != http.StatusConflict
	}, 5*time.Second, 100*time.Millisecond, "the lock expires and a retry takes the key over")
	require.Equal(t, http.StatusOK, retry.status, "%s", retry.body)
	unblock()

	r := <-slow
	require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
	require.Equal(t, "request_in_progress", r.errorCode(t))
	again := b.do(t, http.MethodPost, path, "", key)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, retry.body, again.body, "the key keeps the retry's answer")
}
