package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/verify"
)

// presetSample is one built-in sample of an HMAC preset, and what the
// service must make of it.
type presetSample struct {
	provider, event string
	secret          string // the source's secret; "" for a plain test secret
	eventType       string // event_type the service records
	// id: the delivery id the service records, exactly (the id in the
	// body) or, starting with ^, a pattern (header ids, body hashes).
	id       string
	occurred string // RFC 3339; "" when the provider sends no ordering time
	resource string // the value at the preset's resource field; "" for none
}

var presetSamples = []presetSample{
	{provider: "shopify", event: "orders/updated", eventType: "orders/updated", id: `^msg_[0-9a-f]{26}$`,
		occurred: "2026-05-12T13:30:41Z", resource: "gid://shopify/Order/820982911946154508"},
	{provider: "slack", event: "app_mention", eventType: "app_mention", id: "Ev" + sampleIDStem,
		occurred: "2026-05-12T13:30:41Z"},
	{provider: "paddle", event: "transaction.completed", eventType: "transaction.completed", id: "evt_01jv" + sampleIDStem,
		occurred: "2026-05-12T13:30:41.823216Z", resource: "txn_01jv4q6y2rqj4mx0rhzk0c1wz5"},
	{provider: "square", event: "payment.updated", eventType: "payment.updated", id: "6a8f5f28-54a1-4eb0-a98a-" + sampleIDStem,
		occurred: "2026-05-12T13:30:42.105Z", resource: "KkAkhdMsgzn59SM8A89WgKwekxLZY"},
	{provider: "razorpay", event: "payment.captured", eventType: "payment.captured", id: `^msg_[0-9a-f]{26}$`,
		occurred: "2026-05-12T13:30:41Z", resource: "pay_QHy4t3tvZ1hTGf"},
	{provider: "lemonsqueezy", event: "order_created", eventType: "order_created", id: `^sha256:[0-9a-f]{64}$`,
		occurred: "2026-05-12T13:30:41Z", resource: "1042"},
	{provider: "checkout", event: "payment_captured", eventType: "payment_captured", id: "evt_" + sampleIDStem,
		occurred: "2026-05-12T13:30:42Z", resource: "pay_waji5li3mqtetnaor77xmow4bq"},
	{provider: "mollie", event: "payment-link.paid", eventType: "payment-link.paid", id: "event_" + sampleIDStem,
		occurred: "2026-05-12T13:30:42Z", resource: "pl_4Y0eZitmBnQ6IDoMqZQKh"},
	{provider: "bitbucket", event: "pullrequest:updated", eventType: "pullrequest:updated", id: `^msg_[0-9a-f]{26}$`,
		occurred: "2026-05-12T13:30:41.806149Z"},
	{provider: "intercom", event: "conversation.user.created", eventType: "conversation.user.created", id: "notif_" + sampleIDStem,
		occurred: "2026-05-12T13:30:41Z", resource: "215468912345678"},
	{provider: "linear", event: "Issue", eventType: "Issue", id: `^msg_[0-9a-f]{26}$`,
		occurred: "2026-05-12T13:30:41.806Z", resource: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9"},
	{provider: "zoom", event: "meeting.started", eventType: "meeting.started", id: `^sha256:[0-9a-f]{64}$`,
		occurred: "2026-05-12T13:30:41.302Z", resource: "85478587462"},
	{provider: "svix", event: "invoice.paid", secret: "whsec_aG9va2luYm94LXRlc3Qtc3ZpeC1zaWdu",
		eventType: "invoice.paid", id: `^msg_[0-9a-f]{26}$`, resource: "inv_01HXK3QW8R5T2Y7B9N4M6P0C1D"},
	{provider: "clerk", event: "user.created", secret: "whsec_aG9va2luYm94LXRlc3QtY2xlcmstc2ln",
		eventType: "user.created", id: `^msg_[0-9a-f]{26}$`, occurred: "2026-05-12T13:30:41.59Z", resource: "user_29w83sxmDNGwOuEthce5gg56FcC"},
	{provider: "resend", event: "email.delivered", secret: "whsec_aG9va2luYm94LXRlc3QtcmVzZW5kLXNp",
		eventType: "email.delivered", id: `^msg_[0-9a-f]{26}$`, occurred: "2026-05-12T13:30:42.126Z", resource: "56761188-7520-42d8-8898-ff6fc54ce618"},
	// GitLab's signing token (whsec_): signed as Standard Webhooks.
	{provider: "gitlab", event: "Merge Request Hook", secret: "whsec_aG9va2luYm94LXRlc3QtZ2l0bGFiLXNp",
		eventType: "Merge Request Hook", id: `^msg_[0-9a-f]{26}$`, occurred: "2026-05-12T13:30:41Z", resource: "99"},
}

// Every preset's built-in sample, sent as `hookinbox send` sends it, is
// accepted by serve with the delivery id, event type and ordering time the
// preset reads; sent again it is a duplicate (Linear's too, though send
// stamps webhookTimestamp anew, as Linear does at each attempt: ingest
// ignores that field when it compares); with --new-id a new delivery.
func TestSendPresets(t *testing.T) {
	t.Parallel()

	// Every sample directory is covered here, except the three older ones
	// (TestServeAndSend).
	dirs, err := samples.ReadDir("samples")
	require.NoError(t, err)
	covered := map[string]bool{verify.ProviderGitHub: true, verify.ProviderStripe: true, verify.ProviderStandard: true}
	for _, s := range presetSamples {
		covered[s.provider] = true
	}
	for _, d := range dirs {
		require.True(t, covered[d.Name()], "samples/%s has no case in presetSamples", d.Name())
	}

	b := setup(t, testdb.URL(t))
	var sources strings.Builder
	for _, s := range presetSamples {
		secret := s.secret
		if secret == "" {
			secret = "test-" + s.provider + "-secret"
		}
		fmt.Fprintf(&sources, "  - {name: %s, provider: %s, secrets: [%q]", s.provider, s.provider, secret)
		if s.provider == "square" {
			// Square signs the URL it posts to; send posts to the listener.
			fmt.Fprintf(&sources, ", notification_url: %q", "http://"+b.listen+"/webhooks/square")
		}
		sources.WriteString("}\n")
	}
	raw, err := os.ReadFile(b.configPath)
	require.NoError(t, err)
	withPresets := strings.Replace(string(raw), "\nsources:\n", "\nsources:\n"+sources.String(), 1)
	require.NotEqual(t, string(raw), withPresets, "the config has a sources list")
	require.NoError(t, os.WriteFile(b.configPath, []byte(withPresets), 0o600))
	b.serve(t)

	// Event names that are not file names are listed as events.
	code, out := b.send(t, "--source", "shopify")
	require.Equal(t, 1, code)
	require.Contains(t, out, "samples for shopify: orders/updated")
	code, out = b.send(t, "--source", "bitbucket")
	require.Equal(t, 1, code)
	require.Contains(t, out, "samples for bitbucket: pullrequest:updated")

	for _, s := range presetSamples {
		t.Run(s.provider, func(t *testing.T) {
			// The sample names its resource where the preset looks.
			body, err := samples.ReadFile(path.Join("samples", s.provider, sampleFileName.Replace(s.event)+".json"))
			require.NoError(t, err)
			require.Equal(t, s.resource, jsonPath(t, body, verify.PresetResource(s.provider)), "resource field %q", verify.PresetResource(s.provider))

			args := []string{"--source", s.provider, "--event", s.event}
			code, out := b.send(t, args...)
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "202 Accepted", out)
			code, out = b.send(t, args...)
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "200 OK", out)
			require.Contains(t, out, `"status":"duplicate"`, out)
			code, out = b.send(t, append(args, "--new-id")...)
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "202 Accepted", out)

			rows := presetDeliveries(t, b, s.provider)
			require.Len(t, rows, 2, "the retry is not a delivery, --new-id is")
			first, renewed := rows[0], rows[1]
			if strings.HasPrefix(s.id, "^") {
				require.Regexp(t, s.id, first.DeliveryID)
				require.Regexp(t, s.id, renewed.DeliveryID)
			} else {
				require.Equal(t, s.id, first.DeliveryID)
				fresh := regexp.QuoteMeta(strings.Replace(s.id, sampleIDStem, "\x00", 1))
				require.Regexp(t, "^"+strings.Replace(fresh, "\x00", "[0-9a-f]{20}", 1)+"$", renewed.DeliveryID)
			}
			require.NotEqual(t, first.DeliveryID, renewed.DeliveryID)
			for _, row := range rows {
				require.Equal(t, s.eventType, row.EventType)
				if s.occurred == "" {
					require.Nil(t, row.OccurredAt)
					continue
				}
				want, err := time.Parse(time.RFC3339Nano, s.occurred)
				require.NoError(t, err)
				require.NotNil(t, row.OccurredAt, "occurred_at")
				require.True(t, want.Equal(*row.OccurredAt), "occurred_at %s, want %s", row.OccurredAt, want)
			}
		})
	}
}

type presetDelivery struct {
	ID         int64      `json:"id"`
	DeliveryID string     `json:"delivery_id"`
	EventType  string     `json:"event_type"`
	OccurredAt *time.Time `json:"occurred_at"`
}

// presetDeliveries lists a source's deliveries through the admin API,
// oldest first.
func presetDeliveries(t *testing.T, b *testBundle, source string) []presetDelivery {
	t.Helper()
	status, body := b.adminGet(t, "/admin/deliveries?source="+source, true)
	require.Equal(t, http.StatusOK, status, body)
	var page struct {
		Items []presetDelivery `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page), body)
	sort.Slice(page.Items, func(i, j int) bool { return page.Items[i].ID < page.Items[j].ID })
	return page.Items
}

// jsonPath returns the string or number at a dotted path of a JSON
// object, "" when absent (or when path is "").
func jsonPath(t *testing.T, body []byte, dotted string) string {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.UseNumber()
	require.NoError(t, d.Decode(&v))
	if dotted == "" {
		return ""
	}
	for _, key := range strings.Split(dotted, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = obj[key]
	}
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}
