package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers/handlertest"
	"github.com/hookinbox/hookinbox/internal/downstreamstub"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testproc"
)

func TestMain(m *testing.M) { handlertest.Main(m) }

func freeAddr(t *testing.T) string { return testproc.FreeAddr(t) }

// The custom binary, built and run as a team would: its migration makes
// its table, a star is recorded and thanked once, and a replay adds
// nothing, neither a row nor a chat message.
func TestCustomBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "myinbox")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	chat := downstreamstub.New(t)
	dbURL := testdb.URL(t)
	listen, adminAddr := freeAddr(t), freeAddr(t)
	cfg := filepath.Join(dir, "myinbox.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
listen: %q
database_url: %q
sources:
  - {name: github, provider: github, secrets: ["gh-secret"]}
admin: {listen: %q, token: "custom-binary-admin-token"}
app:
  chat_url: "%s/chat"
`, listen, dbURL, adminAddr, chat.URL)), 0o600))
	star := filepath.Join(dir, "star.json")
	require.NoError(t, os.WriteFile(star, []byte(`{"action":"created","starred_at":"2026-12-01T10:00:00Z",
		"repository":{"full_name":"acme/rockets"},"sender":{"login":"octocat"}}`), 0o600))

	logs := testproc.Start(t, exec.Command(bin, "serve", "--config", cfg))
	testproc.WaitReady(t, "http://"+listen+"/readyz", 60*time.Second)

	sent, err := exec.Command(bin, "send", "--config", cfg, "--source", "github", "--event", "star", "--file", star).CombinedOutput()
	require.NoError(t, err, "%s", sent)
	inboxID := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(string(sent))[1]

	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	defer pool.Close()
	count := func(sql string) int {
		var n int
		require.NoError(t, pool.QueryRow(context.Background(), sql).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool { return len(chat.Effects("/chat")) == 1 }, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, count("SELECT count(*) FROM stargazer WHERE repo = 'acme/rockets' AND login = 'octocat'"))
	require.Equal(t, 1, count("SELECT count(*) FROM hookinbox_app_migration WHERE version = 1 AND name = 'stargazer'"),
		"its migration is tracked apart from hookinbox's")
	require.Contains(t, string(chat.Requests("/chat")[0].Body), "Thanks for starring acme/rockets, @octocat")

	replayed, err := exec.Command(bin, "replay", inboxID, "--config", cfg).CombinedOutput()
	require.NoError(t, err, "%s", replayed)
	require.Eventually(t, func() bool {
		return count("SELECT count(*) FROM river_job WHERE kind = 'process_delivery' AND state = 'completed'") == 2
	}, 30*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // what a second message would need to arrive
	require.Len(t, chat.Requests("/chat"), 1, "the replay thanked nobody twice")
	require.Equal(t, 1, count("SELECT count(*) FROM stargazer"))
	require.True(t, strings.Contains(logs.String(), `handlers registered`) && strings.Contains(logs.String(), "acme.stargazers"))
}
