package handlers

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/github_issue_mirror_upsert.sql
var githubIssueMirrorUpsertSQL string

// RegisterGitHubIssueMirror keeps github_issue_mirror at the latest state
// of every issue and pull request that any github source reports.
func RegisterGitHubIssueMirror(r *Registry) error {
	return r.Register(Registration{
		Name:     "github.issue_mirror",
		Provider: "github",
		Events:   []string{"issues", "pull_request"},
		Batch:    true, // database work only
		Ordering: LatestState,
		Handler:  HandlerFunc(mirrorIssue),
	})
}

func mirrorIssue(ctx context.Context, e *Event) error {
	var (
		repo, kind, state, title string
		number                   int
		updated                  time.Time
	)
	switch ev := e.GitHub.(type) {
	case *github.IssuesEvent:
		repo, kind = ev.GetRepo().GetFullName(), "issue"
		number, state, title = ev.GetIssue().GetNumber(), ev.GetIssue().GetState(), ev.GetIssue().GetTitle()
		updated = ev.GetIssue().GetUpdatedAt().Time
		if ev.GetAction() == "deleted" {
			state = "deleted"
		}
	case *github.PullRequestEvent:
		repo, kind = ev.GetRepo().GetFullName(), "pull_request"
		number, state, title = ev.GetPullRequest().GetNumber(), ev.GetPullRequest().GetState(), ev.GetPullRequest().GetTitle()
		updated = ev.GetPullRequest().GetUpdatedAt().Time
		if ev.GetPullRequest().GetMerged() {
			state = "merged"
		}
	default:
		return Permanent(fmt.Errorf("%s payload is not an issue or pull request event", e.EventType))
	}
	if repo == "" || number == 0 {
		return Permanent(fmt.Errorf("%s payload lacks repository.full_name or a number", e.EventType))
	}
	if updated.IsZero() {
		updated = e.ReceivedAt
	}
	// Deferred: the upsert's result changes nothing here, and in a batch it
	// then rides the next delivery's round trip.
	e.Defer(githubIssueMirrorUpsertSQL, pgnamed.Args{
		"repo": repo, "number": number, "kind": kind, "state": state, "title": title,
		"updated_at": updated, "delivery_id": e.DeliveryID,
	})
	return nil
}
