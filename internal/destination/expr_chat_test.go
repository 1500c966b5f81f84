package destination

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

// Each escape leaves a hostile string as its characters on its platform,
// and an operator's transform can call them.
func TestChatEscapes(t *testing.T) {
	t.Parallel()
	in := inputOf("github", "issues", []byte(`{"title": "<!channel> <https://evil.example/login|Log in> & @everyone [Log in](https://evil.example) *now*"}`))
	cases := []struct{ transform, want string }{
		{`slackEscape(body.title)`, `&lt;!channel&gt; &lt;https://evil.example/login|Log in&gt; &amp; @everyone [Log in](https://evil.example) *now*`},
		{`discordEscape(body.title)`, `\<!channel\> \<https://evil.example/login\|Log in\> & \@everyone \[Log in\]\(https://evil.example\) \*now\*`},
		{`teamsEscape(body.title)`, `&lt;!channel&gt; &lt;https://evil.example/login\|Log in&gt; &amp; @everyone \[Log in\]\(https://evil.example\) \*now\*`},
	}
	for _, tc := range cases {
		x, err := compileRoute(config.Route{Transform: tc.transform})
		require.NoError(t, err)
		body, _, err := x.apply(&in)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(body), tc.transform)
	}
}
