package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/alerts"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
)

// hostileAnswer is a failing destination's answer, quoted in an alert's
// summary: a channel-wide mention and a disguised link in Slack's markup,
// and the same in Discord's and Teams' markdown.
const hostileAnswer = `Destination app failing: HTTP 400 <!channel> <https://evil.example/login|Click to re-authenticate> ` +
	`@everyone [Click to re-authenticate](https://evil.example/login) <b>now</b>`

// alertMessage is the body the built-in chat format sends for an alert
// whose summary is hostileAnswer.
func alertMessage(t *testing.T, transform string) map[string]any {
	t.Helper()
	cfg := config.Config{Alerts: config.Alerts{To: []string{"chat"}, Transform: transform,
		Rules: []config.AlertRule{{SendsFailed: &struct {
			Min int `yaml:"min"`
		}{Min: 1}}}}}
	body, err := json.Marshal(map[string]string{"rule": "sends_failed", "subject": "app", "summary": hostileAnswer,
		"console": "http://localhost:8081/console/alerts/7", "subject_console": "http://localhost:8081/console/destinations/app"})
	require.NoError(t, err)
	results, err := destination.Evaluate(alertRoutes(cfg), sourceNames(cfg), destination.ExprInput{Source: alerts.Source,
		EventType: alerts.EventOpened, Body: body, ContentType: "application/json"})
	require.NoError(t, err)
	require.Len(t, results, 1)
	require.NoError(t, results[0].Err)
	var msg map[string]any
	require.NoError(t, json.Unmarshal(results[0].Body, &msg))
	return msg
}

// A destination's answer quoted in a chat alert is text on each platform:
// no mention, no link under words it chose.
func TestChatAlertsCarryNoMarkupFromOutside(t *testing.T) {
	t.Parallel()
	slack := alertMessage(t, "slack")["text"].(string)
	require.Contains(t, slack, `HTTP 400 &lt;!channel&gt; &lt;https://evil.example/login|Click to re-authenticate&gt;`)
	require.NotContains(t, slack, "<")

	discord := alertMessage(t, "discord")
	require.Equal(t, map[string]any{"parse": []any{}}, discord["allowed_mentions"], "no mention pings")
	content := discord["content"].(string)
	require.Contains(t, content, `\[Click to re\-authenticate\]\(https://evil.example/login\)`)
	require.Contains(t, content, `\@everyone`)
	require.Contains(t, content, `\<!channel\> \<https://evil.example/login\|`)

	teams := alertMessage(t, "teams")["text"].(string)
	require.Contains(t, teams, `\[Click to re\-authenticate\]\(https://evil.example/login\)`)
	require.Contains(t, teams, `&lt;b&gt;now&lt;/b&gt;`)
}

// Every chat format carries both links: the alert's page and its
// subject's.
func TestChatAlertsLinkTheAlertAndItsSubject(t *testing.T) {
	t.Parallel()
	for transform, field := range map[string]string{"slack": "text", "discord": "content", "teams": "text"} {
		text := alertMessage(t, transform)[field].(string)
		require.Contains(t, text, " http://localhost:8081/console/alerts/7", transform)
		require.Contains(t, text, " http://localhost:8081/console/destinations/app", transform)
	}
}
