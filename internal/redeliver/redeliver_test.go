package redeliver

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const (
	testToken = "ghp_testTokenThatMustNeverLeak0123456789"
	repoHook  = "repos/octo/hello/hooks/42"
	orgHook   = "orgs/octo-org/hooks/7"
)

type testBundle struct {
	pool *pgxpool.Pool
	gh   *fakeGitHub
	cfg  Config // the repository hook on gh, source "github"
	now  time.Time
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	gh := newFakeGitHub(t, testToken)
	return &testBundle{
		pool: testdb.New(t),
		gh:   gh,
		cfg:  Config{Source: "github", GitHubAPI: config.GitHubAPI{APIURL: gh.URL(), Token: testToken, Repo: "octo/hello", HookID: 42}},
		// GitHub's timestamps have whole seconds.
		now: time.Now().UTC().Truncate(time.Second),
	}
}

// ago is an attempt time relative to the test's now.
func (b *testBundle) ago(d time.Duration) time.Time { return b.now.Add(-d) }

// insertInbox stores a delivery as ingest would, with a placeholder body.
func (b *testBundle) insertInbox(t *testing.T, source, deliveryID string) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(),
		`WITH stored AS (
			INSERT INTO inbox (id, source, delivery_id, event_type, payload, payload_sha256)
			VALUES (nextval('inbox_id_seq'), $1, $2, 'push', '{}'::bytea, sha256('{}'::bytea))
			RETURNING id, source, delivery_id, payload_sha256, origin
		 )
		 INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
		 SELECT source, delivery_id, id, payload_sha256, origin FROM stored`, source, deliveryID)
	require.NoError(t, err)
}

func (b *testBundle) redeliver(t *testing.T, cfg Config, since time.Time) Result {
	t.Helper()
	res, err := Redeliver(context.Background(), b.pool, cfg, since)
	require.NoError(t, err)
	return res
}

func guid(n int) string {
	return "00000000-0000-4000-8000-" + strconv.FormatInt(int64(100000000000+n), 10)
}

func TestRedeliverFollowsPaginationAndRedeliversFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.setPageSize(2)
	b.gh.add(repoHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(50 * time.Minute), StatusCode: 500},
		attempt{ID: 2, GUID: guid(2), At: b.ago(40 * time.Minute), StatusCode: 200},
		attempt{ID: 3, GUID: guid(3), At: b.ago(30 * time.Minute), StatusCode: 0}, // timed out
		attempt{ID: 4, GUID: guid(4), At: b.ago(20 * time.Minute), StatusCode: 202},
		attempt{ID: 5, GUID: guid(5), At: b.ago(10 * time.Minute), StatusCode: 503},
	)

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 5, Failed: 3, Redelivered: 3, Errors: []string{}}, res)
	// Oldest first, so handlers see events roughly in the order they happened.
	require.Equal(t, []int64{1, 3, 5}, b.gh.redeliveries())
	require.Equal(t, []listCall{
		{hook: repoHook, perPage: "100"},
		{hook: repoHook, perPage: "100", cursor: "v1_3"},
		{hook: repoHook, perPage: "100", cursor: "v1_1"},
	}, b.gh.listCalls())
}

func TestRedeliverStopsPagingAtSince(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.setPageSize(2)
	b.gh.add(repoHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(5 * time.Hour), StatusCode: 500},
		attempt{ID: 2, GUID: guid(2), At: b.ago(4 * time.Hour), StatusCode: 500},
		attempt{ID: 3, GUID: guid(3), At: b.ago(3 * time.Hour), StatusCode: 500},
		attempt{ID: 4, GUID: guid(4), At: b.ago(2 * time.Hour), StatusCode: 500},
		attempt{ID: 5, GUID: guid(5), At: b.ago(30 * time.Minute), StatusCode: 500},
		attempt{ID: 6, GUID: guid(6), At: b.ago(20 * time.Minute), StatusCode: 500},
		attempt{ID: 7, GUID: guid(7), At: b.ago(10 * time.Minute), StatusCode: 500},
	)

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 3, Failed: 3, Redelivered: 3, Errors: []string{}}, res)
	require.Equal(t, []int64{5, 6, 7}, b.gh.redeliveries())
	// Page 2 (attempts 5 and 4) reaches past since: pages 3 and 4 are never asked for.
	require.Len(t, b.gh.listCalls(), 2)
}

func TestRedeliverGUIDWithASuccessfulAttemptIsNotFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.add(repoHook,
		// Failed, then a redelivery that got through.
		attempt{ID: 1, GUID: guid(1), At: b.ago(30 * time.Minute), StatusCode: 502},
		attempt{ID: 3, GUID: guid(1), At: b.ago(20 * time.Minute), StatusCode: 202, Redelivery: true},
		// Failed twice: the latest attempt is the one redelivered.
		attempt{ID: 2, GUID: guid(2), At: b.ago(25 * time.Minute), StatusCode: 502},
		attempt{ID: 4, GUID: guid(2), At: b.ago(15 * time.Minute), StatusCode: 0, Redelivery: true},
	)

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 2, Failed: 1, Redelivered: 1, Errors: []string{}}, res)
	require.Equal(t, []int64{4}, b.gh.redeliveries())
}

func TestRedeliverSinceBoundsTheFirstAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.add(repoHook,
		// First delivered before since; a redelivery we asked for earlier
		// failed again within since. It must not be redelivered every pass
		// forever.
		attempt{ID: 1, GUID: guid(1), At: b.ago(3 * time.Hour), StatusCode: 401},
		attempt{ID: 2, GUID: guid(1), At: b.ago(10 * time.Minute), StatusCode: 401, Redelivery: true},
	)

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, Result{Errors: []string{}}, res)
	require.Empty(t, b.gh.redeliveries())
}

func TestRedeliverSkipsDeliveriesAlreadyInInbox(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.add(repoHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(30 * time.Minute), StatusCode: 0}, // stored, answered too late
		attempt{ID: 2, GUID: guid(2), At: b.ago(20 * time.Minute), StatusCode: 500},
		attempt{ID: 3, GUID: guid(3), At: b.ago(10 * time.Minute), StatusCode: 500},
	)
	b.insertInbox(t, "github", guid(1))
	b.insertInbox(t, "other-github", guid(2)) // another source's row does not count

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 3, Failed: 3, AlreadyInInbox: 1, Redelivered: 2, Errors: []string{}}, res)
	require.Equal(t, []int64{2, 3}, b.gh.redeliveries())
}

func TestRedeliverRefusedRedeliveryIsReportedAndPassGoesOn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.add(repoHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(30 * time.Minute), StatusCode: 500},
		attempt{ID: 2, GUID: guid(2), At: b.ago(20 * time.Minute), StatusCode: 500},
		attempt{ID: 3, GUID: guid(3), At: b.ago(10 * time.Minute), StatusCode: 500},
	)
	b.gh.refuseRedelivery(2, 500)

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, 3, res.Failed)
	require.Equal(t, 2, res.Redelivered)
	require.Len(t, res.Errors, 1)
	require.Contains(t, res.Errors[0], guid(2)+": ")
	require.Contains(t, res.Errors[0], "500")
	require.NotContains(t, res.Errors[0], testToken)
	require.Equal(t, []int64{1, 2, 3}, b.gh.redeliveries())
}

func TestRedeliverOrganisationHook(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.setPageSize(1)
	b.gh.add(orgHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(20 * time.Minute), StatusCode: 500, Event: "repository", Action: "created", Installation: 9},
		attempt{ID: 2, GUID: guid(2), At: b.ago(10 * time.Minute), StatusCode: 200, Event: "member", Action: "added"},
	)
	cfg := b.cfg
	cfg.Repo, cfg.Org, cfg.HookID = "", "octo-org", 7

	res := b.redeliver(t, cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 2, Failed: 1, Redelivered: 1, Errors: []string{}}, res)
	require.Equal(t, []int64{1}, b.gh.redeliveries())
	require.Equal(t, []listCall{
		{hook: orgHook, perPage: "100"},
		{hook: orgHook, perPage: "100", cursor: "v1_1"},
	}, b.gh.listCalls())
}

func TestRedeliverNothingFailedAnswersEmptyErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.add(repoHook, attempt{ID: 1, GUID: guid(1), At: b.ago(time.Minute), StatusCode: 200})

	res := b.redeliver(t, b.cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 1, Errors: []string{}}, res)
	out, err := json.Marshal(res)
	require.NoError(t, err)
	require.JSONEq(t, `{"examined":1,"failed":0,"already_in_inbox":0,"redelivered":0,"errors":[]}`, string(out))
}

func TestRedeliverListUnauthorizedHidesToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.echoAuth = true // set before any request reaches the server
	b.gh.add(repoHook, attempt{ID: 1, GUID: guid(1), At: b.ago(time.Minute), StatusCode: 500})
	cfg := b.cfg
	cfg.Token = "ghp_revokedTokenThatMustNeverLeak987654321"

	_, err := Redeliver(context.Background(), b.pool, cfg, b.ago(time.Hour))

	require.Error(t, err)
	require.ErrorIs(t, err, ErrUnauthorized)
	require.NotErrorIs(t, err, ErrHookNotFound)
	var lerr *ListError
	require.ErrorAs(t, err, &lerr)
	require.Equal(t, 401, lerr.StatusCode)
	require.Contains(t, err.Error(), `repository "octo/hello" hook 42`)
	require.Contains(t, err.Error(), "Bad credentials")
	for e := err; e != nil; e = errors.Unwrap(e) {
		require.NotContains(t, e.Error(), cfg.Token)
	}
	require.Empty(t, b.gh.redeliveries())
}

func TestRedeliverListUnknownHook(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.cfg
	cfg.HookID = 404

	_, err := Redeliver(context.Background(), b.pool, cfg, b.ago(time.Hour))

	require.ErrorIs(t, err, ErrHookNotFound)
	require.NotErrorIs(t, err, ErrUnauthorized)
	require.NotContains(t, err.Error(), testToken)
}
