// Package github holds the GitHub handler hookinbox ships, built on the
// handlers package's API alone: the issue mirror (RegisterIssueMirror),
// which keeps the table github_issue_mirror at the latest state of every
// issue and pull request that any github source reports, one row per
// repository and number. hookinbox's migrations create the table
// (migrations/002_handlers.up.sql), so a binary built on hookinbox has it
// whether it registers the mirror or not.
package github

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/pgnamed"
)

//go:embed sql/issue_mirror_upsert.sql
var issueMirrorUpsertSQL string

// RegisterIssueMirror keeps github_issue_mirror at the latest state of
// every issue and pull request that any github source reports.
func RegisterIssueMirror(r *handlers.Registry) error {
	return r.Register(handlers.Registration{
		Name:        "github.issue_mirror",
		Provider:    "github",
		Events:      []string{"issues", "pull_request"},
		Batch:       true, // database work only
		PayloadOnly: true, // reads GitHubFields, not go-github's typed event
		Ordering:    handlers.LatestState,
		Handler:     handlers.HandlerFunc(mirrorIssue),
	})
}

// issueMirrorRow is one row of github_issue_mirror.
type issueMirrorRow struct {
	Repo, Kind, State, Title string
	Number                   int
	Updated                  time.Time // zero when the payload has none
	DeliveryID               string
}

func mirrorIssue(ctx context.Context, e *handlers.Event) error {
	row, err := issueMirrorRowOf(&e.Delivery)
	if err != nil {
		return err
	}
	if row.Updated.IsZero() {
		row.Updated = e.ReceivedAt
	}
	row.DeliveryID = e.DeliveryID
	// Deferred: the upsert's result changes nothing here, and a batch
	// writes its deliveries' rows in one statement.
	e.DeferRow(issueMirrorRows{}, row)
	return nil
}

// issueMirrorRows writes a processing batch's mirror rows in one
// statement. Of rows for one issue it keeps the one the statements a row
// apart would have left: the newest updated_at as the database stores it
// (to the microsecond), the later of equals. One statement cannot update
// a row twice, and two sources' deliveries of one issue are two
// resources, which one batch may hold. The rows go in key order, so that
// two batches lock the rows they share in the same order.
type issueMirrorRows struct{}

func (issueMirrorRows) QueueRows(batch *pgx.Batch, rows []any) {
	rows = slices.Clone(rows) // QueueRows must not keep or reorder the caller's
	slices.SortStableFunc(rows, func(a, b any) int {
		x, y := a.(issueMirrorRow), b.(issueMirrorRow)
		return cmp.Or(cmp.Compare(x.Repo, y.Repo), cmp.Compare(x.Number, y.Number))
	})
	var (
		at   = map[[2]any]int{} // (repo, number) → index in the arrays
		args = struct {
			repos, kinds, states, titles, deliveryIDs []string
			numbers                                   []int
			updated                                   []time.Time
		}{}
	)
	for _, r := range rows {
		row := r.(issueMirrorRow)
		key := [2]any{row.Repo, row.Number}
		if i, ok := at[key]; ok {
			if row.Updated.Truncate(time.Microsecond).Before(args.updated[i].Truncate(time.Microsecond)) {
				continue
			}
			args.kinds[i], args.states[i], args.titles[i] = row.Kind, row.State, row.Title
			args.updated[i], args.deliveryIDs[i] = row.Updated, row.DeliveryID
			continue
		}
		at[key] = len(args.repos)
		args.repos, args.numbers, args.kinds = append(args.repos, row.Repo), append(args.numbers, row.Number), append(args.kinds, row.Kind)
		args.states, args.titles = append(args.states, row.State), append(args.titles, row.Title)
		args.updated, args.deliveryIDs = append(args.updated, row.Updated), append(args.deliveryIDs, row.DeliveryID)
	}
	batch.Queue(issueMirrorUpsertSQL, pgnamed.Args{
		"repos": args.repos, "numbers": args.numbers, "kinds": args.kinds, "states": args.states,
		"titles": args.titles, "updated_ats": args.updated, "delivery_ids": args.deliveryIDs,
	})
}

// issueMirrorRowOf reads the mirror's row from an issues or pull_request
// delivery: a deleted issue's state is "deleted", a merged pull request's
// "merged". The error is Permanent: the payload will not change.
func issueMirrorRowOf(d *handlers.Delivery) (issueMirrorRow, error) {
	f, ok := d.GitHubFields()
	var (
		row  issueMirrorRow
		item *handlers.GitHubIssue
	)
	switch d.EventType {
	case "issues":
		row.Kind, item = "issue", f.Issue
	case "pull_request":
		row.Kind, item = "pull_request", f.PullRequest
	}
	if !ok || row.Kind == "" {
		return row, handlers.Permanent(fmt.Errorf("%s payload is not an issue or pull request event", d.EventType))
	}
	row.Repo = f.Repo
	if item != nil {
		row.Number, row.State, row.Title, row.Updated = item.Number, item.State, item.Title, item.UpdatedAt
	}
	if row.Repo == "" || row.Number == 0 {
		return row, handlers.Permanent(fmt.Errorf("%s payload lacks repository.full_name or a number", d.EventType))
	}
	switch {
	case row.Kind == "issue" && f.Action == "deleted":
		row.State = "deleted"
	case row.Kind == "pull_request" && item.Merged:
		row.State = "merged"
	}
	return row, nil
}
