package ingest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/verify"
)

// presetSecret is every preset source's secret in these tests, in the shape
// its provider needs.
func presetSecret(provider string) string {
	switch provider {
	case "svix", "clerk", "resend":
		return standardSecret
	case verify.ProviderDiscord:
		return hex.EncodeToString(discordTestKey.Public().(ed25519.PublicKey))
	}
	return provider + "-test-secret"
}

var discordTestKey = ed25519.NewKeyFromSeed([]byte("hookinbox-ingest-discord-seed-32"))

const presetURL = "https://hooks.example.com/webhooks/"

// presetSources is one source per preset, named after it.
func presetSources(t *testing.T, providers []string) []ingest.Source {
	var out []ingest.Source
	for _, p := range providers {
		v, err := verify.New(verify.Config{Provider: p, Secrets: []string{presetSecret(p)}, NotificationURL: presetURL + p})
		require.NoError(t, err, p)
		out = append(out, ingest.Source{Name: p, Provider: p, Verifier: v})
	}
	return out
}

// presetRequest signs body as provider's sender does.
func presetRequest(t *testing.T, provider string, body []byte, now time.Time) http.Header {
	t.Helper()
	if provider == verify.ProviderDiscord {
		ts := fmt.Sprint(now.Unix())
		sig := ed25519.Sign(discordTestKey, append([]byte(ts), body...))
		return http.Header{"X-Signature-Ed25519": {hex.EncodeToString(sig)}, "X-Signature-Timestamp": {ts}, "Content-Type": {"application/json"}}
	}
	s, err := verify.NewConfigSigner(verify.Config{Provider: provider, Secrets: []string{presetSecret(provider)}, NotificationURL: presetURL + provider})
	require.NoError(t, err, provider)
	h, err := s.Sign(body, verify.Message{ID: "dlv-" + provider, EventType: "thing.happened"}, now)
	require.NoError(t, err, provider)
	return h
}

var presetNames = []string{"shopify", "slack", "paddle", "square", "razorpay", "lemonsqueezy", "checkout", "mollie",
	"bitbucket", "intercom", "linear", "zoom", "svix", "clerk", "resend", "gitlab", "discord"}

// TestPresetDuplicateIs200: for every preset, a delivery is a 202 and the
// same delivery again a 200 duplicate, one row.
func TestPresetDuplicateIs200(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{sources: presetSources(t, presetNames)})
	now := time.Now()
	// One body that every preset reads: each finds its id and type where
	// it looks (a header the signer sets, or one of these fields).
	body := []byte(fmt.Sprintf(`{"id":"evt_dup_1","event_id":"evt_dup_1","type":"thing.happened","event_type":"thing.happened",`+
		`"event":"thing.happened","topic":"thing.happened","token":"t","webhookTimestamp":%d,"data":{"id":"r_1"}}`, now.UnixMilli()))
	for _, p := range presetNames {
		h := presetRequest(t, p, body, now)
		first := b.post(t, "/webhooks/"+p, body, h)
		require.Equal(t, http.StatusAccepted, first.status, "%s: %s", p, first.raw)
		again := b.post(t, "/webhooks/"+p, body, presetRequest(t, p, body, now.Add(time.Second)))
		require.Equal(t, http.StatusOK, again.status, "%s: %s", p, again.raw)
		require.Equal(t, "duplicate", again.Status, p)
		require.Equal(t, first.ID, again.ID, p)
		require.Equal(t, first.DeliveryID, again.DeliveryID, p)
	}
	require.Equal(t, len(presetNames), b.counts(t).inbox)
}

// TestHandshakesAnswerAndStoreNothing: a verified handshake gets the answer
// its sender needs; an unverified one a 401; neither stores anything.
func TestHandshakesAnswerAndStoreNothing(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{sources: presetSources(t, []string{"slack", "zoom", "discord"})})
	now := time.Now()
	mac := hmac.New(sha256.New, []byte(presetSecret("zoom")))
	mac.Write([]byte("qgg8vlvZRS6UYooatFL8Aw"))
	for _, tc := range []struct {
		source, body     string
		status           int
		contentType, out string
	}{
		{"slack", `{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`,
			200, "application/json", `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`},
		{"zoom", `{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}`,
			200, "application/json", `{"encryptedToken":"` + hex.EncodeToString(mac.Sum(nil)) + `","plainToken":"qgg8vlvZRS6UYooatFL8Aw"}`},
		{"discord", `{"type":1,"id":"1","token":"t","application_id":"1","version":1}`, 200, "application/json", `{"type":1}`},
		{"discord", `{"version":1,"application_id":"1","type":0}`, 204, "", ""},
	} {
		h := presetRequest(t, tc.source, []byte(tc.body), now)
		status, ct, out := rawPost(t, b, "/webhooks/"+tc.source, []byte(tc.body), h)
		require.Equal(t, tc.status, status, "%s: %s", tc.source, out)
		require.Equal(t, tc.out, out, tc.source)
		if tc.contentType != "" {
			require.Equal(t, tc.contentType, ct, tc.source)
		}

		// The same handshake signed with another secret is refused.
		forged := presetRequest(t, tc.source, []byte(tc.body+" "), now)
		status, _, out = rawPost(t, b, "/webhooks/"+tc.source, []byte(tc.body), forged)
		require.Equal(t, http.StatusUnauthorized, status, "%s: %s", tc.source, out)
	}
	require.Equal(t, counts{}, b.counts(t), "a handshake stores nothing")
}

func rawPost(t *testing.T, b *testBundle, path string, body []byte, h http.Header) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, b.baseURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = h
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(out)
}

// TestLinearRetryIsADuplicate: Linear stamps webhookTimestamp into the body
// each time it sends a delivery, so its retry's body differs from the
// stored one only there. That is a 200 duplicate (one row, no conflict
// recorded), in both commit modes; another body under the same id is
// still a 409.
func TestLinearRetryIsADuplicate(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		opts.sources = presetSources(t, []string{"linear"})
		b := setupWith(t, opts)
		now := time.Now()
		body := func(issue string, sent time.Time) []byte {
			return []byte(fmt.Sprintf(`{"action":"update","type":"Issue","data":{"id":%q},"webhookTimestamp":%d}`, issue, sent.UnixMilli()))
		}
		first := body("iss_1", now)
		got := b.post(t, "/webhooks/linear", first, presetRequest(t, "linear", first, now))
		require.Equal(t, http.StatusAccepted, got.status, "%s", got.raw)

		retry := body("iss_1", now.Add(time.Minute))
		again := b.post(t, "/webhooks/linear", retry, presetRequest(t, "linear", retry, now.Add(time.Minute)))
		require.Equal(t, http.StatusOK, again.status, "%s", again.raw)
		require.Equal(t, "duplicate", again.Status)
		require.Equal(t, got.ID, again.ID)

		other := body("iss_2", now.Add(time.Minute))
		conflict := b.post(t, "/webhooks/linear", other, presetRequest(t, "linear", other, now.Add(time.Minute)))
		require.Equal(t, http.StatusConflict, conflict.status, "%s", conflict.raw)

		require.Equal(t, 1, b.counts(t).inbox)
		var conflicts int
		require.NoError(t, b.pool.QueryRow(context.Background(), "SELECT count(*) FROM delivery_conflict").Scan(&conflicts))
		require.Equal(t, 1, conflicts, "only the other body is a conflict")
	})
}
