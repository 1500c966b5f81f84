package ingest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/verify"
)

const gitlabToken = "gl-secret-token"

// requireHeaderNames fails unless the stored headers hold every name of
// want and none of absent, names compared case-insensitively.
func requireHeaderNames(t *testing.T, headers map[string][]string, want, absent []string) {
	t.Helper()
	has := map[string]bool{}
	for name := range headers {
		has[strings.ToLower(name)] = true
	}
	for _, name := range want {
		require.True(t, has[strings.ToLower(name)], "%s missing from the stored headers %v", name, headers)
	}
	for _, name := range absent {
		require.False(t, has[strings.ToLower(name)], "%s stored: %v", name, headers)
	}
}

// GitLab's secret token is the secret itself: it verifies the request and
// is then dropped, from the delivery and from a conflict's record alike.
// A source's redact_headers are dropped the same way, and only there.
func TestSecretHeadersAreNotStored(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		proxied := source(t, "proxied", verify.ProviderGitHub, githubSecret)
		proxied.RedactHeaders = []string{"x-proxy-secret", "X-INTERNAL-AUTH"}
		opts.sources = []ingest.Source{source(t, "gitlab", verify.ProviderGitLab, gitlabToken), proxied}
		b := setupWith(t, opts)
		ctx := context.Background()
		storedHeaders := func(t *testing.T, query string, args ...any) map[string][]string {
			t.Helper()
			var h map[string][]string
			require.NoError(t, b.pool.QueryRow(ctx, query, args...).Scan(&h))
			return h
		}

		body := []byte(`{"object_kind":"merge_request","object_attributes":{"id":7,"updated_at":"2024-03-01 11:59:00 UTC"}}`)
		h := signed(t, verify.ProviderGitLab, gitlabToken, body, verify.Message{ID: "gl-1", EventType: "Merge Request Hook"}, time.Now())
		require.Equal(t, gitlabToken, h.Get("X-Gitlab-Token"), "the request carries the token")
		r := b.post(t, "/webhooks/gitlab", body, h)
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.raw)
		headers := storedHeaders(t, "SELECT headers FROM delivery WHERE id = $1", r.ID)
		requireHeaderNames(t, headers, []string{"X-Gitlab-Event", "Idempotency-Key", "Content-Type"}, []string{"X-Gitlab-Token"})
		for _, values := range headers {
			for _, v := range values {
				require.NotContains(t, v, gitlabToken)
			}
		}

		// Verification still reads the token.
		wrong := h.Clone()
		wrong.Set("X-Gitlab-Token", "not-the-token")
		r = b.post(t, "/webhooks/gitlab", body, wrong)
		require.Equal(t, http.StatusUnauthorized, r.status, "%s", r.raw)
		wrong.Del("X-Gitlab-Token")
		r = b.post(t, "/webhooks/gitlab", body, wrong)
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.raw)

		// The same id with another body: the refused body is kept for
		// operators, without the token.
		r = b.post(t, "/webhooks/gitlab", []byte(`{"object_kind":"merge_request","object_attributes":{"id":8}}`), h)
		require.Equal(t, http.StatusConflict, r.status, "%s", r.raw)
		headers = storedHeaders(t, "SELECT headers FROM delivery_conflict WHERE delivery_id = 'gl-1'")
		requireHeaderNames(t, headers, []string{"X-Gitlab-Event"}, []string{"X-Gitlab-Token"})

		// redact_headers: matched whatever the case, on its source only.
		for _, src := range []string{"proxied", "github"} {
			body := githubBody(91)
			h := githubHeaders(t, githubSecret, "gh-redact-"+src, body)
			h.Set("X-Proxy-Secret", "proxy-s3cret")
			h.Set("X-Internal-Auth", "internal-s3cret")
			h.Set("X-Note", "kept")
			r := b.post(t, "/webhooks/"+src, body, h)
			require.Equal(t, http.StatusAccepted, r.status, "%s: %s", src, r.raw)
			headers := storedHeaders(t, "SELECT headers FROM delivery WHERE id = $1", r.ID)
			if src == "proxied" {
				requireHeaderNames(t, headers, []string{"X-Note", "X-Github-Delivery"}, []string{"X-Proxy-Secret", "X-Internal-Auth"})
			} else {
				requireHeaderNames(t, headers, []string{"X-Note", "X-Proxy-Secret", "X-Internal-Auth"}, nil)
			}
		}
	})
}

func TestRedactHeadersValidated(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	river, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"X-Ok", ""}, `source "s": RedactHeaders[1]: empty header name`},
		{[]string{"X Bad"}, `source "s": RedactHeaders[0]: "X Bad" is not a header name`},
		{[]string{"X-Bad:"}, `"X-Bad:" is not a header name`},
		{[]string{"Ünïcode"}, `"Ünïcode" is not a header name`},
	} {
		src := source(t, "s", verify.ProviderGitHub, githubSecret)
		src.RedactHeaders = tc.names
		_, err := ingest.NewServer(ingest.Config{Sources: []ingest.Source{src}, Inbox: ingest.NewInbox(pool, river)})
		require.ErrorContains(t, err, tc.want, tc.names)
	}
}
