package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox"
	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/handlertest"
)

// The handler alone, as a team tests its own: a real database with the
// binary's migrations, a real River client, a stand-in chat.
func TestStargazerThankedOnce(t *testing.T) {
	t.Parallel()
	chat := handlertest.NewDownstream(t)
	env := handlertest.New(t, handlertest.Config{
		Migrations: hookinbox.Sub(migrations, "migrations"),
		Register: func(r *handlers.Registry) error {
			return register(r, chat.URL+"/chat", &http.Client{Timeout: time.Second})
		},
	})
	star := []byte(`{"action":"created","repository":{"full_name":"acme/rockets"},"sender":{"login":"hubot"}}`)
	id := env.Deliver(t, "github", "star-1", "star", star)
	env.WaitStatus(t, id, "processed")
	require.Equal(t, map[string]int{"completed": 1}, env.WaitJobs(t, "acme_thank"))

	chat.Script("/chat", handlertest.Fail) // a retry of the replay would meet a 500: there is none
	env.WaitStatus(t, id, "processed")
	env.Replay(t, id)
	env.WaitJobs(t, "process_delivery")
	require.Len(t, chat.Requests("/chat"), 1, "thanked once, replay or not")
	require.Equal(t, 1, len(chat.Effects("/chat")))
	var n int
	require.NoError(t, env.Pool.QueryRow(t.Context(), "SELECT count(*) FROM stargazer").Scan(&n))
	require.Equal(t, 1, n)
}
