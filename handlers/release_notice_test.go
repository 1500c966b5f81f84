package handlers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/example/releasenotice"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// setupReleaseNotice runs docs/handlers.md's example handler, posting to
// chat, with its table migrated as that page's step 1 says.
func setupReleaseNotice(t *testing.T) (b *testBundle, chat *downstreamstub.Server) {
	t.Helper()
	chat = downstreamstub.New(t)
	b = setupWith(t, setupOpts{register: func(r *handlers.Registry) {
		require.NoError(t, releasenotice.Register(r, chat.URL+"/chat"))
	}})
	_, err := b.Pool.Exec(context.Background(),
		`CREATE TABLE release_notice (repo text, tag text, delivery_id text NOT NULL, PRIMARY KEY (repo, tag))`)
	require.NoError(t, err)
	return b, chat
}

func TestReleaseNoticePostsOnce(t *testing.T) {
	t.Parallel()
	b, chat := setupReleaseNotice(t)
	gh := newID("gh")
	id := b.deliver(t, "github", gh, "release", releasePayload("acme/app", "v1.2.0"), time.Time{})
	b.WaitStatus(t, id, "processed")
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "release_notice"))
	require.Equal(t, "completed", b.WaitJob(t, b.Replay(t, id)))
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "release_notice"))

	reqs := chat.Requests("/chat")
	require.Len(t, reqs, 1)
	require.Equal(t, handlers.DeriveIntentKey("github", "github.release_notifier", "notify", "acme/app", "v1.2.0"), reqs[0].Key)
	var body map[string]string
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	require.Equal(t, map[string]string{"text": "acme/app v1.2.0 is out"}, body)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM release_notice"))
}

// GitHub resends a release with a new delivery id (a redelivery, or a
// second hook): the notice belongs to the release, so it is posted once,
// with one key.
func TestReleaseNoticeOncePerRelease(t *testing.T) {
	t.Parallel()
	b, chat := setupReleaseNotice(t)
	for _, gh := range []string{newID("gh"), newID("gh")} {
		b.WaitStatus(t, b.deliver(t, "github", gh, "release", releasePayload("acme/app", "v2.0.0"), time.Time{}), "processed")
	}
	require.Equal(t, map[string]int{"completed": 1}, b.WaitJobs(t, "release_notice"))
	reqs := chat.Requests("/chat")
	require.Len(t, reqs, 1, "one notice per release")
	require.Equal(t, map[string]int{handlers.DeriveIntentKey("github", "github.release_notifier", "notify", "acme/app", "v2.0.0"): 1},
		chat.Effects("/chat"), "one key, the release's")
}
