package handlers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/github"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// Two GitHub sources (an App and a repository's own webhook, say) report
// the same issues; their deliveries are different resources, so one
// processing batch may hold both. The mirror writes a batch's rows in one
// statement and keeps, of one issue's, the newest, the later of equals,
// as one statement a delivery would: the batch does not fail.
func TestIssueMirrorBatchKeepsTheNewestOfAnIssuesRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	reg := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{
		{Name: "github-app", Provider: "github"}, {Name: "github-repo", Provider: "github"},
	}})
	require.NoError(t, github.RegisterIssueMirror(reg))
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	issue := func(source, title string, number int, updated time.Time) handlers.Delivery {
		return handlers.Delivery{Source: source, Provider: "github", EventType: "issues", DeliveryID: newID(title), ReceivedAt: time.Now(),
			Payload: fmt.Appendf(nil, `{"action":"edited","issue":{"number":%d,"title":%q,"state":"open","updated_at":%q},"repository":{"full_name":"octo/repo","id":1}}`,
				number, title, updated.Format(time.RFC3339))}
	}
	ds := []handlers.Delivery{
		issue("github-app", "newer", 1, at.Add(time.Minute)),
		issue("github-repo", "older", 1, at),
		issue("github-app", "first of equals", 2, at),
		issue("github-repo", "later of equals", 2, at),
	}
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		results, errs, err := reg.ProcessBatch(ctx, tx, nil, ds)
		require.NoError(t, err, "the batch")
		for i := range ds {
			require.NoError(t, errs[i])
			require.Equal(t, handlers.OutcomeProcessed, results[i].Outcome)
		}
		return nil
	}))
	for number, want := range map[int]handlers.Delivery{1: ds[0], 2: ds[3]} {
		var last string
		require.NoError(t, pool.QueryRow(ctx, "SELECT last_delivery_id FROM github_issue_mirror WHERE repo = 'octo/repo' AND number = $1", number).Scan(&last))
		require.Equal(t, want.DeliveryID, last, "issue %d", number)
	}
}
