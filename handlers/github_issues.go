package handlers

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/github_issue_mirror_upsert.sql
var githubIssueMirrorUpsertSQL string

// RegisterGitHubIssueMirror keeps github_issue_mirror at the latest state
// of every issue and pull request that any github source reports.
func RegisterGitHubIssueMirror(r *Registry) error {
	return r.Register(Registration{
		Name:        "github.issue_mirror",
		Provider:    "github",
		Events:      []string{"issues", "pull_request"},
		Batch:       true, // database work only
		PayloadOnly: true, // reads its few fields, not go-github's typed event
		Ordering:    LatestState,
		Handler:     HandlerFunc(mirrorIssue),
	})
}

// issueMirrorRow is one row of github_issue_mirror.
type issueMirrorRow struct {
	Repo, Kind, State, Title string
	Number                   int
	Updated                  time.Time // zero when the payload has none
}

func mirrorIssue(ctx context.Context, e *Event) error {
	row, err := issueMirrorRowOf(&e.Delivery)
	if err != nil {
		return err
	}
	if row.Updated.IsZero() {
		row.Updated = e.ReceivedAt
	}
	// Deferred: the upsert's result changes nothing here, and in a batch it
	// then rides the next delivery's round trip.
	e.Defer(githubIssueMirrorUpsertSQL, pgnamed.Args{
		"repo": row.Repo, "number": row.Number, "kind": row.Kind, "state": row.State, "title": row.Title,
		"updated_at": row.Updated, "delivery_id": e.DeliveryID,
	})
	return nil
}

// issueMirrorRowOf reads the mirror's row from an issues or pull_request
// delivery: a deleted issue's state is "deleted", a merged pull request's
// "merged". The error is Permanent: the payload will not change.
func issueMirrorRowOf(d *Delivery) (issueMirrorRow, error) {
	f, ok := d.gitHubFields()
	var (
		row  issueMirrorRow
		item *gitHubItem
	)
	switch d.EventType {
	case "issues":
		row.Kind, item = "issue", f.Issue
	case "pull_request":
		row.Kind, item = "pull_request", f.PullRequest
	}
	if !ok || row.Kind == "" {
		return row, Permanent(fmt.Errorf("%s payload is not an issue or pull request event", d.EventType))
	}
	row.Repo = f.repo()
	if item != nil {
		row.Number, row.State, row.Title, row.Updated = item.Number, item.State, item.Title, timeOf(item.UpdatedAt)
	}
	if row.Repo == "" || row.Number == 0 {
		return row, Permanent(fmt.Errorf("%s payload lacks repository.full_name or a number", d.EventType))
	}
	switch {
	case row.Kind == "issue" && f.Action == "deleted":
		row.State = "deleted"
	case row.Kind == "pull_request" && item.Merged:
		row.State = "merged"
	}
	return row, nil
}
