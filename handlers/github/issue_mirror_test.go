package github

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gogithub "github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

// The mirror reads its row from the delivery's few fields
// (handlers.Delivery.GitHubFields), not from go-github's typed event: for
// every payload go-github parses, the two readings give the same row, or
// both refuse it.
func TestIssueMirrorRowMatchesGoGitHub(t *testing.T) {
	t.Parallel()
	type sample struct{ event, payload string }
	cases := map[string]sample{
		"issue":               {"issues", `{"action":"edited","issue":{"number":7,"state":"open","title":"t","updated_at":"2026-11-30T09:00:00Z"},"repository":{"full_name":"acme/app"}}`},
		"issue deleted":       {"issues", `{"action":"deleted","issue":{"number":7,"state":"open","title":"t"},"repository":{"full_name":"acme/app"}}`},
		"issue unix time":     {"issues", `{"action":"closed","issue":{"number":7,"state":"closed","updated_at":1795939964},"repository":{"full_name":"acme/app"}}`},
		"issue key case":      {"issues", `{"ACTION":"deleted","Issue":{"NUMBER":7,"Title":"x"},"Repository":{"Full_Name":"acme/app"}}`},
		"issue nulls":         {"issues", `{"action":null,"issue":{"number":7,"title":null,"state":null,"updated_at":null},"repository":{"full_name":"acme/app"}}`},
		"issue no repo":       {"issues", `{"action":"edited","issue":{"number":7}}`},
		"issue null repo":     {"issues", `{"action":"edited","issue":{"number":7},"repository":null}`},
		"issue no number":     {"issues", `{"action":"edited","issue":{"title":"x"},"repository":{"full_name":"acme/app"}}`},
		"issue missing":       {"issues", `{"action":"edited","repository":{"full_name":"acme/app"}}`},
		"issue wrong type":    {"issues", `{"action":"edited","issue":{"number":"seven"},"repository":{"full_name":"acme/app"}}`},
		"issue bad time":      {"issues", `{"action":"edited","issue":{"number":7,"updated_at":"yesterday"},"repository":{"full_name":"acme/app"}}`},
		"issue escapes":       {"issues", `{"action":"edited","issue":{"number":7,"title":"\u00e9\ud83d\ude00 \ud800 \"q\"","body":"a\nb"},"repository":{"full_name":"acme/app"}}`},
		"issue duplicates":    {"issues", `{"action":"opened","action":"deleted","issue":{"number":7,"number":8},"repository":{"full_name":"acme/app"}}`},
		"pr open":             {"pull_request", `{"action":"opened","number":9,"pull_request":{"number":9,"state":"open","title":"p","updated_at":"2026-11-30T09:01:00Z"},"repository":{"full_name":"acme/app"}}`},
		"pr merged":           {"pull_request", `{"action":"closed","pull_request":{"number":9,"state":"closed","merged":true},"repository":{"full_name":"acme/app"}}`},
		"pr closed unmerged":  {"pull_request", `{"action":"closed","pull_request":{"number":9,"state":"closed","merged":false},"repository":{"full_name":"acme/app"}}`},
		"pr deleted action":   {"pull_request", `{"action":"deleted","pull_request":{"number":9,"state":"open"},"repository":{"full_name":"acme/app"}}`},
		"pr merged null":      {"pull_request", `{"action":"closed","pull_request":{"number":9,"state":"closed","merged":null},"repository":{"full_name":"acme/app"}}`},
		"pr as issue payload": {"pull_request", `{"action":"edited","issue":{"number":9},"repository":{"full_name":"acme/app"}}`},
		"not json":            {"issues", `{"action":`},
		"not an object":       {"issues", `[1,2]`},
	}
	for event, payload := range gitHubSamples(t) {
		if event == "issues" || event == "pull_request" {
			cases["sample "+event] = sample{event, payload}
		}
	}
	for name, tc := range cases {
		d := handlers.Delivery{Provider: "github", EventType: tc.event, Payload: []byte(tc.payload)}
		got, gotErr := issueMirrorRowOf(&d)
		require.Nil(t, d.GitHub, "%s: the mirror's reading parses no typed event", name)
		typed, err := gogithub.ParseWebHook(tc.event, d.Payload)
		if err != nil {
			// go-github refuses a body with a fault anywhere in it; the mirror
			// too when the fault is in what it reads (every case here).
			require.Error(t, gotErr, "%s: go-github refuses it (%v)", name, err)
			continue
		}
		d.GitHub = typed
		want, wantErr := typedIssueMirrorRow(d)
		if wantErr != nil {
			require.Error(t, gotErr, "%s: the typed reading refuses it (%v)", name, wantErr)
			continue
		}
		require.NoError(t, gotErr, name)
		require.True(t, want.Updated.Equal(got.Updated), "%s: updated %v, typed %v", name, got.Updated, want.Updated)
		want.Updated = got.Updated // equal instants; the zones may differ
		require.Equal(t, want, got, name)
	}
}

// typedIssueMirrorRow is the mirror's row as read from go-github's typed
// event, as the mirror did before it read GitHubFields.
func typedIssueMirrorRow(d handlers.Delivery) (issueMirrorRow, error) {
	var row issueMirrorRow
	switch ev := d.GitHub.(type) {
	case *gogithub.IssuesEvent:
		row = issueMirrorRow{Repo: ev.GetRepo().GetFullName(), Kind: "issue", Number: ev.GetIssue().GetNumber(),
			State: ev.GetIssue().GetState(), Title: ev.GetIssue().GetTitle(), Updated: ev.GetIssue().GetUpdatedAt().Time}
		if ev.GetAction() == "deleted" {
			row.State = "deleted"
		}
	case *gogithub.PullRequestEvent:
		row = issueMirrorRow{Repo: ev.GetRepo().GetFullName(), Kind: "pull_request", Number: ev.GetPullRequest().GetNumber(),
			State: ev.GetPullRequest().GetState(), Title: ev.GetPullRequest().GetTitle(), Updated: ev.GetPullRequest().GetUpdatedAt().Time}
		if ev.GetPullRequest().GetMerged() {
			row.State = "merged"
		}
	default:
		return row, errors.New("not an issue or pull request with a repository and number")
	}
	if row.Repo == "" || row.Number == 0 {
		return row, errors.New("not an issue or pull request with a repository and number")
	}
	return row, nil
}

// gitHubSamples returns the shipped GitHub sample payloads
// (internal/cli/samples/github) by event type.
func gitHubSamples(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "internal", "cli", "samples", "github", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	out := make(map[string]string, len(paths))
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		out[strings.TrimSuffix(filepath.Base(path), ".json")] = string(raw)
	}
	return out
}
