package handlers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzJSONString: jsonString never panics, and finds nothing in a body
// that is not JSON.
func FuzzJSONString(f *testing.F) {
	f.Add([]byte(`{"data":{"id":"evt_1"}}`), "data.id")
	f.Add([]byte(`{"data":{"object":{"id":"pi_123","amount":1200}}}`), "data.object.id")
	f.Add([]byte(`{"data":{"object":{"id":"pi_123","amount":1200}}}`), "data.object.amount")
	f.Add([]byte(`{"data":{"id":12.5e3}}`), "data.id")
	f.Add([]byte(`{"data":[{"id":"x"}]}`), "data.0.id")
	f.Add([]byte(`{"":{"":"empty"}}`), ".")
	f.Add([]byte(`"just a string"`), "")
	f.Add([]byte(`{"data":{"id":null}}`), "data.id")
	f.Add([]byte(`{"data":`), "data")
	f.Add([]byte{}, "data.id")
	f.Fuzz(func(t *testing.T, payload []byte, path string) {
		got := jsonString(payload, path)
		if !json.Valid(payload) {
			require.Empty(t, got, "a body that is not JSON has no field")
		}
	})
}

// FuzzJSONStringPath: the string at a dotted path of a body built by
// encoding/json is found there exactly.
func FuzzJSONStringPath(f *testing.F) {
	f.Add("data.id", "evt_1")
	f.Add("data.object.id", "pi_123")
	f.Add("repository", "acme/webshop")
	f.Add("a.b.c.d.e.f", "")
	f.Add("<html>.&amp;", "quote \" backslash \\ tab \t nul \x00")
	f.Add("ключ.键", "värde 値 \u2028")
	f.Fuzz(func(t *testing.T, path, leaf string) {
		segments := strings.Split(path, ".")
		for _, s := range segments {
			if s == "" {
				t.Skip("segments must be non-empty")
			}
			if !utf8.ValidString(s) {
				t.Skip("encoding/json rewrites invalid UTF-8 in keys, so no JSON body has this key")
			}
		}
		if !utf8.ValidString(leaf) {
			t.Skip("encoding/json rewrites invalid UTF-8 in strings")
		}
		var v any = leaf
		for i := len(segments) - 1; i >= 0; i-- {
			v = map[string]any{segments[i]: v}
		}
		payload, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, leaf, jsonString(payload, path), "payload %s", payload)
	})
}

// FuzzResourceOf: resourceOf never panics, names no resource for a body
// that is not JSON, and always gives an ordering time.
func FuzzResourceOf(f *testing.F) {
	f.Add("github", "issues", []byte(`{"action":"edited","repository":{"full_name":"acme/webshop"},"issue":{"number":42,"updated_at":"2026-01-02T03:04:05Z"}}`), "")
	f.Add("github", "pull_request", []byte(`{"repository":{"full_name":"acme/webshop"},"pull_request":{"number":7,"updated_at":"2026-01-02T03:04:05Z"}}`), "")
	f.Add("github", "push", []byte(`{"ref":"refs/heads/main","repository":{"full_name":"acme/webshop"}}`), "")
	f.Add("github", "issues", []byte(`{"repository":{"full_name":"acme/webshop"},"issue":{"number":1,"updated_at":"not a time"}}`), "")
	f.Add("stripe", "payment_intent.succeeded", []byte(`{"id":"evt_1","created":1700000000,"data":{"object":{"id":"pi_123"}}}`), "")
	f.Add("standard", "invoice.paid", []byte(`{"type":"invoice.paid","timestamp":"2026-01-02T03:04:05Z","data":{"id":"inv_1"}}`), "")
	f.Add("standard", "invoice.paid", []byte(`{"data":{"invoice":{"number":1001}}}`), "data.invoice.number")
	f.Add("unknown", "x", []byte(`not json`), "data.id")
	f.Add("", "", []byte{}, "")
	occurred := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	received := occurred.Add(time.Minute)
	f.Fuzz(func(t *testing.T, provider, eventType string, payload []byte, field string) {
		for _, p := range []string{"github", "stripe", "standard", provider} {
			for _, at := range []time.Time{{}, occurred} {
				d := Delivery{InboxID: 1, Source: "src", Provider: p, DeliveryID: "d1", EventType: eventType,
					OccurredAt: at, ReceivedAt: received, Payload: payload}
				r := resourceOf(&d, field)
				if !json.Valid(payload) {
					require.Empty(t, r.Key, "provider %q: a body that is not JSON names no resource", p)
				}
				require.False(t, r.At.IsZero(), "provider %q: receipt time stands in for a missing ordering time", p)
			}
		}
	})
}
