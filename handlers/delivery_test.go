package handlers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

// parseGitHub decodes with the json/v2 engine in v1 mode instead of
// go-github's own ParseWebHook (encoding/json): both give the same typed
// event for the shipped samples and for the corners where the engines
// could differ (key case, invalid UTF-8, escapes, Timestamp's two forms,
// nulls, unknown fields, duplicate names), and both refuse the same bodies.
func TestParseGitHubMatchesGoGitHub(t *testing.T) {
	t.Parallel()
	type sample struct{ event, payload string }
	cases := map[string]sample{
		"key case":        {"issues", `{"ACTION":"edited","Issue":{"NUMBER":7,"title":"x"},"repository":{"full_name":"acme/app"}}`},
		"invalid utf-8":   {"issues", "{\"action\":\"edited\",\"issue\":{\"number\":7,\"title\":\"caf\xe9 \xff\"}}"},
		"escapes":         {"issues", `{"action":"edited","issue":{"number":7,"title":"\u00e9\ud83d\ude00 \ud800 \"q\" \\ \/","body":"a\nb\tc"}}`},
		"timestamp forms": {"push", `{"ref":"refs/heads/main","head_commit":{"timestamp":"2026-11-30T09:12:44+01:00"},"repository":{"full_name":"acme/app","pushed_at":1795939964,"created_at":"2026-01-02T03:04:05Z"}}`},
		"nulls":           {"issues", `{"action":null,"issue":{"number":7,"title":null,"labels":null,"assignee":null},"repository":null}`},
		"unknown fields":  {"issues", `{"action":"edited","zzz":{"deep":[1,2,{"x":null}]},"issue":{"number":7,"not_in_go_github":true}}`},
		"duplicate names": {"issues", `{"action":"opened","action":"closed","issue":{"number":7,"number":8}}`},
		"big numbers":     {"issues", `{"action":"edited","issue":{"id":9007199254740993,"number":7,"comments":1e2}}`},
		"wrong type":      {"issues", `{"action":"edited","issue":{"number":"seven"}}`},
		"wrong nesting":   {"issues", `{"action":"edited","issue":[1,2]}`},
		"bad timestamp":   {"issues", `{"action":"edited","issue":{"number":7,"updated_at":"yesterday"}}`},
		"not json":        {"issues", `{"action":`},
		"unknown event":   {"no_such_event", `{"action":"edited"}`},
	}
	for event, payload := range gitHubSamples(t) {
		cases["sample "+event] = sample{event, payload}
	}
	for name, tc := range cases {
		d := Delivery{Provider: "github", EventType: tc.event, Payload: []byte(tc.payload)}
		d.parseGitHub()
		want, err := github.ParseWebHook(tc.event, d.Payload)
		if err != nil {
			require.Nil(t, d.GitHub, "%s: go-github refuses it (%v), so must parseGitHub", name, err)
			continue
		}
		require.NotNil(t, d.GitHub, "%s: go-github parses it", name)
		require.Equal(t, want, d.GitHub, name)
	}
}

// GitHubFields read from the payload agree with go-github's typed event
// on the issue and pull request events it reads, for the shipped samples
// and the corners of TestParseGitHubMatchesGoGitHub, and parse no typed
// event themselves.
func TestGitHubFieldsMatchGoGitHub(t *testing.T) {
	t.Parallel()
	type sample struct{ event, payload string }
	cases := map[string]sample{
		"issue":         {"issues", `{"action":"edited","issue":{"number":7,"state":"open","title":"t","updated_at":"2026-11-30T09:00:00Z"},"repository":{"full_name":"acme/app"}}`},
		"issue unix":    {"issues", `{"action":"closed","issue":{"number":7,"state":"closed","updated_at":1795939964},"repository":{"full_name":"acme/app"}}`},
		"key case":      {"issues", `{"ACTION":"deleted","Issue":{"NUMBER":7,"Title":"x"},"Repository":{"Full_Name":"acme/app"}}`},
		"nulls":         {"issues", `{"action":null,"issue":{"number":7,"title":null,"state":null,"updated_at":null},"repository":null}`},
		"pr merged":     {"pull_request", `{"action":"closed","pull_request":{"number":9,"state":"closed","merged":true,"updated_at":"2026-11-30T09:01:00Z"},"repository":{"full_name":"acme/app"}}`},
		"comment on pr": {"issue_comment", `{"action":"created","issue":{"number":9,"updated_at":"2026-11-30T09:02:00Z","pull_request":{"url":"x"}},"repository":{"full_name":"acme/app"}}`},
		"wrong type":    {"issues", `{"action":"edited","issue":{"number":"seven"}}`},
		"not json":      {"issues", `{"action":`},
	}
	for event, payload := range gitHubSamples(t) {
		cases["sample "+event] = sample{event, payload}
	}
	for name, tc := range cases {
		d := Delivery{Provider: "github", EventType: tc.event, Payload: []byte(tc.payload)}
		got, ok := d.GitHubFields()
		require.Nil(t, d.GitHub, "%s: GitHubFields parse no typed event", name)
		typed, err := github.ParseWebHook(tc.event, d.Payload)
		if err != nil {
			require.False(t, ok, "%s: go-github refuses it (%v)", name, err)
			continue
		}
		require.True(t, ok, name)
		var (
			want  GitHubFields
			issue *github.Issue
			pr    *github.PullRequest
		)
		switch ev := typed.(type) {
		case *github.IssuesEvent:
			want.Action, want.Repo, issue = ev.GetAction(), ev.GetRepo().GetFullName(), ev.Issue
		case *github.IssueCommentEvent:
			want.Action, want.Repo, issue = ev.GetAction(), ev.GetRepo().GetFullName(), ev.Issue
		case *github.PullRequestEvent:
			want.Action, want.Repo, pr = ev.GetAction(), ev.GetRepo().GetFullName(), ev.PullRequest
		default:
			continue // GitHubFields are read for the others too, but compared here on these
		}
		if issue != nil {
			want.Issue = &GitHubIssue{Number: issue.GetNumber(), State: issue.GetState(), Title: issue.GetTitle(), UpdatedAt: issue.GetUpdatedAt().Time}
		}
		if pr != nil {
			want.PullRequest = &GitHubIssue{Number: pr.GetNumber(), State: pr.GetState(), Title: pr.GetTitle(), UpdatedAt: pr.GetUpdatedAt().Time, Merged: pr.GetMerged()}
		}
		for _, pair := range [][2]*GitHubIssue{{want.Issue, got.Issue}, {want.PullRequest, got.PullRequest}} {
			if pair[0] != nil && pair[1] != nil {
				require.True(t, pair[0].UpdatedAt.Equal(pair[1].UpdatedAt), "%s: updated %v, typed %v", name, pair[1].UpdatedAt, pair[0].UpdatedAt)
				pair[0].UpdatedAt = pair[1].UpdatedAt // equal instants; the zones may differ
			}
		}
		require.Equal(t, want, got, name)
	}
}

// gitHubSamples returns the shipped GitHub sample payloads
// (internal/cli/samples/github) by event type.
func gitHubSamples(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "internal", "cli", "samples", "github", "*.json"))
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
