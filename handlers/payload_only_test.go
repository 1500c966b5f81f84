package handlers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

// A handler gets go-github's typed event unless every handler its delivery
// matched is PayloadOnly (the shipped mirror is): then Event.GitHub is nil,
// and the resource and the mirror's row come from the payload alone.
// Batched and alone, the two paths that parse.
func TestEventGitHubOnlyForHandlersThatReadIt(t *testing.T) {
	t.Parallel()
	for _, payloadOnly := range []bool{true, false} {
		for name, batchSize := range map[string]int{"batched": 0, "alone": 1} {
			t.Run(fmt.Sprintf("%s/payload only %v", name, payloadOnly), func(t *testing.T) {
				t.Parallel()
				b := setupWith(t, setupOpts{maxAttempts: 1, batchSize: batchSize, register: func(r *handlers.Registry) {
					require.NoError(t, r.Register(handlers.Registration{
						Name: "test.github_reader", Provider: "github", Events: []string{"issues"}, Batch: true, PayloadOnly: payloadOnly,
						Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
							typed, _ := e.GitHub.(*github.IssuesEvent)
							_, err := e.Tx.Exec(ctx, "INSERT INTO github_reader VALUES ($1, $2, $3)",
								e.DeliveryID, e.GitHub != nil, typed.GetIssue().GetNumber())
							return err
						}),
					}))
				}})
				_, err := b.Pool.Exec(context.Background(), "CREATE TABLE github_reader (delivery_id text PRIMARY KEY, typed boolean, number int)")
				require.NoError(t, err)

				updated := time.Now().Add(-time.Hour).Truncate(time.Second)
				id := newID("issue")
				inboxID := b.deliver(t, "github", id, "issues", issuePayload("acme/typed", 7, "title", updated), time.Time{})
				b.WaitStatus(t, inboxID, "processed")

				wantNumber := 0
				if !payloadOnly {
					wantNumber = 7
				}
				require.Equal(t, 1, b.count(t, "SELECT count(*) FROM github_reader WHERE delivery_id = $1 AND typed = $2 AND number = $3",
					id, !payloadOnly, wantNumber), "Event.GitHub is set exactly when a matched handler reads it")
				require.Equal(t, 1, b.count(t, "SELECT count(*) FROM delivery WHERE id = $1 AND resource_key = 'acme/typed#7'", inboxID))
				require.Equal(t, 1, b.count(t, `SELECT count(*) FROM github_issue_mirror
					WHERE repo = 'acme/typed' AND number = 7 AND kind = 'issue' AND state = 'open' AND title = 'title' AND updated_at = $1`, updated))
			})
		}
	}
}
