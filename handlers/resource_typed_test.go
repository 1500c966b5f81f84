package handlers

import (
	"testing"
	"time"
)

// The typed path (go-github's parsed event) and the JSON path give the
// same resource and ordering time for every payload shape the typed path
// takes, and agree where one is missing or empty.
func TestGitHubTypedResourceMatchesTheJSONPath(t *testing.T) {
	t.Parallel()
	received := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cases := map[string]struct{ event, payload string }{
		"issue":          {"issues", `{"action":"edited","issue":{"number":7,"updated_at":"2026-11-30T09:00:00Z"},"repository":{"full_name":"acme/app"}}`},
		"issue no time":  {"issues", `{"action":"edited","issue":{"number":7},"repository":{"full_name":"acme/app"}}`},
		"issue no repo":  {"issues", `{"action":"edited","issue":{"number":7,"updated_at":"2026-11-30T09:00:00Z"}}`},
		"issue number 0": {"issues", `{"action":"edited","issue":{"number":0},"repository":{"full_name":"acme/app"}}`},
		"pull request":   {"pull_request", `{"action":"closed","number":9,"pull_request":{"number":9,"updated_at":"2026-11-30T09:01:00Z"},"repository":{"full_name":"acme/app"}}`},
		"comment on pr":  {"issue_comment", `{"action":"created","issue":{"number":9,"updated_at":"2026-11-30T09:02:00Z","pull_request":{"url":"x"}},"repository":{"full_name":"acme/app"}}`},
		"push":           {"push", `{"ref":"refs/heads/main","head_commit":{"timestamp":"2026-11-30T09:12:44+01:00"},"repository":{"full_name":"acme/app","pushed_at":1795939964}}`},
		"push no pushed": {"push", `{"ref":"refs/heads/main","head_commit":{"timestamp":"2026-11-30T09:12:44+01:00"},"repository":{"full_name":"acme/app"}}`},
		"push deleted":   {"push", `{"ref":"refs/heads/gone","deleted":true,"head_commit":null,"repository":{"full_name":"acme/app","pushed_at":1795939964}}`},
		"push no ref":    {"push", `{"repository":{"full_name":"acme/app","pushed_at":1795939964}}`},
	}
	for event, payload := range gitHubSamples(t) {
		cases["sample "+event] = struct{ event, payload string }{event, payload}
	}
	for name, tc := range cases {
		d := Delivery{Provider: "github", EventType: tc.event, Payload: []byte(tc.payload), ReceivedAt: received}
		jsonPath := resourceOf(&d, "")
		d.parseGitHub()
		if d.GitHub == nil {
			t.Fatalf("%s: go-github did not parse it", name)
		}
		typed := resourceOf(&d, "")
		if typed.Key != jsonPath.Key || !typed.At.Equal(jsonPath.At) || typed.AtIsReceipt != jsonPath.AtIsReceipt {
			t.Errorf("%s: typed %+v, JSON %+v", name, typed, jsonPath)
		}
	}
}
