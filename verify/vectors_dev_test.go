package verify

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// trustedVector is a delivery whose signature (or, for GitLab's token mode,
// whose headers) comes from outside this repository: a provider's worked
// example, or one its official SDK accepted. Only the id and event headers
// a vector lacks are filled in here; never the signature.
type trustedVector struct {
	provider string
	// source cites where the secret, body and signature come from.
	source   string
	secret   string
	body     string // the exact bytes; bodyFile instead when long
	bodyFile string // under testdata/vectors
	header   http.Header
	now      time.Time
	want     Delivery
	// skip says why a provider has no trusted vector yet.
	skip string
}

const (
	// Atlassian's published check of the X-Hub-Signature recipe.
	bitbucketDocSecret = "It's a Secret to Everybody"
	bitbucketDocBody   = "Hello World!"
	bitbucketDocSig    = "sha256=a4771c39fbe90f317c7824e83ddef3caae9cb3d976c214ace1f2937e133263c9"

	// linear/linear packages/sdk/src/_tests/LinearWebhooks.test.ts: its
	// secret and its body, JSON.stringify'd exactly as the test does.
	linearSDKSecret = "SECRET"
	linearSDKBody   = `{"action":"create","data":{"id":"2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9","createdAt":"2020-01-23T12:53:18.084Z","updatedAt":"2020-01-23T12:53:18.084Z","archivedAt":null,"body":"Indeed, I think this is definitely an improvement over the previous version.","edited":false,"issueId":"539068e2-ae88-4d09-bd75-22eb4a59612f","userId":"aacdca22-6266-4c0a-ab3c-8fa70a26765c"},"type":"Comment","url":"https://linear.app/issue/LIN-1778/foo-bar#comment-77217de3-fb52-4dad-bb9a-b356beb93de8","createdAt":"2020-01-23T12:53:18.084Z","webhookTimestamp":1677611643000}`
	linearSDKSig    = "8790fcbbea809950be9198408593c2a13f7591bba6c61adb589f709b5e1b186a"

	// The meeting.started example of zoom/webhook-sample's README, as
	// compact JSON (Rivet verifies JSON.stringify of the parsed body).
	zoomRivetSecret = "zoom-webhook-secret-token"
	zoomRivetBody   = `{"event":"meeting.started","payload":{"account_id":"{ACCOUNT_ID}","object":{"duration":0,"start_time":"2021-11-02T20:43:19Z","timezone":"America/Denver","topic":"{TOPIC}","id":"{MEETING_ID}","type":4,"uuid":"{MEETING_UUID}","host_id":"{HOST_ID}"}},"event_ts":1635885799302}`
	zoomRivetTS     = "1635885800"
	zoomRivetSig    = "v0=14966bf252bda21e93d60d34691471fb81b5bcfc7ec99f3563536b40b043fd6c"
)

func trustedVectors() []trustedVector {
	return []trustedVector{
		{
			// Atlassian's published test values for its X-Hub-Signature
			// (secret, payload, expected header), on
			// https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks
			// and, as Bitbucket's reference vector, for Bitbucket Cloud's
			// https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/
			// (Secure webhooks). The payload is not an event body, so no
			// time is read. X-Request-UUID and X-Event-Key are ours.
			provider: "bitbucket",
			source:   "Atlassian's published X-Hub-Signature test values (developer.atlassian.com/cloud/jira/platform/webhooks; support.atlassian.com/bitbucket-cloud/docs/manage-webhooks)",
			secret:   bitbucketDocSecret, body: bitbucketDocBody,
			header: hdr("X-Hub-Signature", bitbucketDocSig,
				"X-Request-UUID", "3b5b8f6e-6a9f-4c1e-9d2a-7f0c1e2d3a4b", "X-Event-Key", "repo:push"),
			now:  testNow,
			want: Delivery{ID: "3b5b8f6e-6a9f-4c1e-9d2a-7f0c1e2d3a4b", EventType: "repo:push"},
		},
		{
			// Intercom documents the formula and shows an example header
			// (sha1=21ff2e149e0fdcac6f947740f6177f6434bda921) but no secret,
			// and reuses that value as a placeholder elsewhere; no official
			// Intercom SDK signs or verifies notifications.
			provider: "intercom",
			source:   "none: developers.intercom.com webhook models, Signed notifications (formula only)",
			skip:     "no trusted Intercom vector exists: the docs' example signature has no secret, and no official SDK verifies X-Hub-Signature",
		},
		{
			// Body and secret of linear/linear packages/sdk/src/_tests/LinearWebhooks.test.ts
			// (commit 0950795080a2482711b72b604286f83ccd04c374), signed with the
			// test's own recipe, createHmac("sha256", "SECRET").update(rawBody).digest("hex"),
			// and accepted by @linear/sdk@98.0.0: new LinearWebhookClient("SECRET")
			// .verify(rawBody, sig) returned true and createHandler() answered
			// 200 OK, with Date.now pinned to webhookTimestamp; a flipped byte
			// was refused. Linear-Delivery and Linear-Event are ours.
			provider: "linear",
			source:   "linear/linear packages/sdk/src/_tests/LinearWebhooks.test.ts@0950795080a2482711b72b604286f83ccd04c374, verified by @linear/sdk@98.0.0 LinearWebhookClient.verify",
			secret:   linearSDKSecret, body: linearSDKBody,
			header: hdr("Linear-Signature", linearSDKSig,
				"Linear-Delivery", "234d1a4e-b617-4388-90fe-adc3633d6b72", "Linear-Event", "Comment",
				"Content-Type", "application/json; charset=utf-8"),
			now:  time.UnixMilli(1677611643000),
			want: Delivery{ID: "234d1a4e-b617-4388-90fe-adc3633d6b72", EventType: "Comment", OccurredAt: at("2020-01-23T12:53:18.084Z")},
		},
		{
			// Signed once with Zoom's documented v0:{x-zm-request-timestamp}:{body}
			// and accepted by @zoom/rivet@0.4.0 (Zoom's official Node SDK):
			// new AwsLambdaReceiver({webhooksSecretToken}).start()({body, headers})
			// answered 200 and emitted meeting.started; a changed body or
			// timestamp got 400. Zoom publishes no worked example.
			provider: "zoom",
			source:   "verified by @zoom/rivet@0.4.0 meetings AwsLambdaReceiver; body from zoom/webhook-sample README",
			secret:   zoomRivetSecret, body: zoomRivetBody,
			header: hdr("X-Zm-Signature", zoomRivetSig, "X-Zm-Request-Timestamp", zoomRivetTS,
				"Content-Type", "application/json; charset=utf-8"),
			now:  time.Unix(1635885800, 0),
			want: Delivery{ID: bodySHA(zoomRivetBody), EventType: "meeting.started", OccurredAt: time.UnixMilli(1635885799302).UTC()},
		},
		{
			// The second example delivery of GitLab's "List group hook events"
			// (gitlabhq/gitlabhq doc/api/group_webhooks.md@ec05f6eb1438ee304c9c92ef2aac3f94ef702ff5):
			// its request_headers and request_data, the token that the docs
			// show as [REDACTED] set to ours. GitLab sends the secret token
			// as is in X-Gitlab-Token (doc/user/project/integrations/webhooks.md,
			// "Secret token"; spec/services/web_hook_service_spec.rb expects
			// 'X-Gitlab-Token' => project_hook.token).
			provider: ProviderGitLab,
			source:   "gitlabhq/gitlabhq doc/api/group_webhooks.md@ec05f6eb1438ee304c9c92ef2aac3f94ef702ff5 (List group hook events, id 2)",
			secret:   "gitlab-secret-token", bodyFile: "gitlab.json",
			header: hdr("Content-Type", "application/json", "User-Agent", "GitLab/17.1.0-pre",
				"Idempotency-Key", "1f0a54f0-0529-408d-a5b8-a2a98ff5f94a", "X-Gitlab-Event", "Push Hook",
				"X-Gitlab-Webhook-UUID", "a753eedb-1d72-4549-9ca7-eac8ea8e50dd", "X-Gitlab-Instance", "https://gitlab.example.com:3000",
				"X-Gitlab-Event-UUID", "842d7c3e-3114-4396-8a95-66c084d53cb1", "X-Gitlab-Token", "gitlab-secret-token"),
			now:  testNow,
			want: Delivery{ID: "1f0a54f0-0529-408d-a5b8-a2a98ff5f94a", EventType: "Push Hook"},
		},
	}
}

// TestTrustedVectors checks every preset against a vector from outside
// this repository (vectors_dev_test.go, vectors_shop_test.go).
func TestTrustedVectors(t *testing.T) {
	t.Parallel()
	for _, tv := range append(trustedVectors(), shopVectors()...) {
		t.Run(tv.provider, func(t *testing.T) {
			t.Parallel()
			if tv.skip != "" {
				t.Skip(tv.skip)
			}
			body := []byte(tv.body)
			if tv.bodyFile != "" {
				var err error
				body, err = os.ReadFile(filepath.Join("testdata", "vectors", tv.bodyFile))
				require.NoError(t, err)
			}
			v, err := New(Config{Provider: tv.provider, Secrets: []string{tv.secret}, Now: func() time.Time { return tv.now }})
			require.NoError(t, err)

			got, err := v.Verify(body, tv.header.Clone())
			require.NoError(t, err, "the trusted vector: %s", tv.source)
			require.Equal(t, tv.want, got)

			if tv.provider == ProviderGitLab {
				// The token signs nothing; a token that is not the
				// configured one is what fails.
				h := tv.header.Clone()
				h.Set(gitLabTokenHeader, tv.secret+"x")
				_, err = v.Verify(body, h)
				requireVerifyErr(t, err, ErrInvalidSignature, tv.secret)
				return
			}
			flipped := append([]byte(nil), body...)
			flipped[len(flipped)/2] ^= 0x01
			_, err = v.Verify(flipped, tv.header.Clone())
			requireVerifyErr(t, err, ErrInvalidSignature, tv.secret)
		})
	}
}
