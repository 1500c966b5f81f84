package destination

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

// sample is one of the shipped `hookinbox send` samples.
func sample(t testing.TB, provider, event string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "cli", "samples", provider, event+".json"))
	require.NoError(t, err)
	return b
}

func sampleB(b *testing.B) []byte { return sample(b, "github", "issues") }

func inputOf(source, event string, body []byte) ExprInput {
	return ExprInput{Source: source, EventType: event, DeliveryID: "d-1", ReceivedAt: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
		Resource: "res-1", Header: http.Header{"Content-Type": {"application/json"}, "X-Github-Event": {event}},
		Body: body, ContentType: "application/json"}
}

// The recipes of docs/routes.md, over the shipped samples.
func TestRouteExpressionsOverProviderSamples(t *testing.T) {
	t.Parallel()
	issues := sample(t, "github", "issues")
	push := sample(t, "github", "push")
	paid := sample(t, "stripe", "payment_intent.succeeded")
	cases := []struct {
		name, filter, transform string
		in                      ExprInput
		match                   bool
		body, contentType       string
	}{
		{name: "an issue labelled bug", in: inputOf("github", "issues", issues), match: true,
			filter: `body.action in ["opened", "reopened"] && body.issue.labels.exists(l, l.name == "bug")`},
		{name: "no such label", in: inputOf("github", "issues", issues), match: false,
			filter: `body.issue.labels.exists(l, l.name == "enhancement")`},
		{name: "a Slack message from an issue", in: inputOf("github", "issues", issues), match: true,
			transform:   `{"text": "Bug: " + slackEscape(body.issue.title) + " " + body.issue.html_url}`,
			body:        `{"text":"Bug: Checkout shows 0.00 for JPY orders https://github.com/acme/webshop/issues/42"}`,
			contentType: "application/json"},
		{name: "Stripe above an amount", in: inputOf("stripe", "payment_intent.succeeded", paid), match: true,
			filter: `double(body.data.object.amount) >= 1000.0`},
		{name: "a header and the event", in: inputOf("github", "push", push), match: true,
			filter: `headers["x-github-event"] == "push" && event == "push" && source == "github"`},
		{name: "drop noisy check runs", in: inputOf("github", "check_run", []byte(`{"action":"completed"}`)), match: false,
			filter: `!event.startsWith("check_run")`},
		{name: "a text body", in: inputOf("github", "issues", issues), match: true,
			transform: `"#" + string(int(body.issue.number)) + " " + body.issue.title.lowerAscii()`,
			body:      "#42 checkout shows 0.00 for jpy orders", contentType: "text/plain; charset=utf-8"},
		{name: "the delivery's facts", in: inputOf("github", "issues", issues), match: true,
			transform: `[delivery_id, resource, string(received_at)]`,
			body:      `["d-1","res-1","2026-12-01T08:00:00Z"]`, contentType: "application/json"},
		{name: "a form body", in: ExprInput{Source: "twilio", EventType: "sms", Body: []byte("From=%2B15551234&Body=hi"),
			ContentType: "Application/x-www-form-urlencoded; charset=UTF-8"}, match: true, filter: `body.Body == "hi" && body.From.startsWith("+1")`},
		{name: "base64 of the body's field", in: inputOf("github", "issues", issues), match: true,
			transform: `{"b": base64.encode(bytes(body.issue.title))}`,
			body:      `{"b":"Q2hlY2tvdXQgc2hvd3MgMC4wMCBmb3IgSlBZIG9yZGVycw=="}`, contentType: "application/json"},
	}
	for _, tc := range cases {
		x, err := compileRoute(config.Route{Filter: tc.filter, Transform: tc.transform})
		require.NoError(t, err, tc.name)
		match, err := x.match(&tc.in)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.match, match, tc.name)
		if tc.transform == "" {
			continue
		}
		body, contentType, err := x.apply(&tc.in)
		require.NoError(t, err, tc.name)
		if contentType == "application/json" {
			require.JSONEq(t, tc.body, string(body), tc.name)
		} else {
			require.Equal(t, tc.body, string(body), tc.name)
		}
		require.Equal(t, tc.contentType, contentType, tc.name)
	}
}

// Without a transform the delivery's bytes go as they came.
func TestNoTransformSendsTheBytes(t *testing.T) {
	t.Parallel()
	in := inputOf("github", "issues", []byte(`{ "spacing" :  "kept" }`))
	x, err := compileRoute(config.Route{Filter: `true`})
	require.NoError(t, err)
	body, contentType, err := x.apply(&in)
	require.NoError(t, err)
	require.Equal(t, `{ "spacing" :  "kept" }`, string(body))
	require.Equal(t, "application/json", contentType)
}

// Every class of mistake is refused when the config loads, naming the
// expression and where in it.
func TestRouteExpressionErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, filter, transform, want string }{
		{"syntax", `body.action ==`, "", "filter: ERROR: <input>:1:15: Syntax error"},
		{"unknown variable", `payload.action == "opened"`, "", "filter: ERROR: <input>:1:1: undeclared reference to 'payload'"},
		{"not a bool", `event + "x"`, "", `filter: "event + \"x\"" yields string; want bool`},
		{"no clock", `received_at < now()`, "", "undeclared reference to 'now'"},
		{"transform to a number", "", `1 + 2`, `transform: "1 + 2" yields int; want map(string, dyn), list(dyn), string`},
		{"wrong types", `event > 3`, "", "found no matching overload for '_>_'"},
	}
	for _, tc := range cases {
		_, err := compileRoute(config.Route{Filter: tc.filter, Transform: tc.transform})
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
	err := Validate([]config.Destination{{Name: "slack", URL: "http://x"}},
		[]config.Route{{Source: "github", Events: []string{"*"}, To: []string{"slack"}, Filter: `body.x ==`}}, []string{"github"})
	require.ErrorContains(t, err, "routes[0] (github).filter: ERROR: <input>:1:10: Syntax error")
}

// Evaluation errors and the cost limit are errors, never a quiet false.
func TestRouteEvaluationErrorsAreErrors(t *testing.T) {
	t.Parallel()
	issues := sample(t, "github", "issues")
	in := inputOf("github", "issues", issues)
	x, err := compileRoute(config.Route{Filter: `body.no_such_field == "x"`})
	require.NoError(t, err)
	_, err = x.match(&in)
	require.ErrorContains(t, err, "filter: no such key: no_such_field")

	x, err = compileRoute(config.Route{Filter: `body.action`})
	require.NoError(t, err)
	_, err = x.match(&in)
	require.ErrorIs(t, err, errNotBool)

	big, err := json.Marshal(map[string]any{"items": make([]int, 5000)})
	require.NoError(t, err)
	x, err = compileRoute(config.Route{CostLimit: 1000, Filter: `body.items.all(i, body.items.exists(j, i == j))`})
	require.NoError(t, err)
	bigIn := inputOf("github", "issues", big)
	_, err = x.match(&bigIn)
	require.ErrorContains(t, err, "cost limit exceeded")

	x, err = compileRoute(config.Route{Transform: `body.issue.number`})
	require.NoError(t, err)
	_, _, err = x.apply(&in)
	require.ErrorContains(t, err, "transform: yielded double; want a map, a list or a string")
}

// A transform's JSON is the same bytes every time: keys sorted, no
// whitespace, "&" and "<" as they are.
func TestTransformJSONIsStable(t *testing.T) {
	t.Parallel()
	x, err := compileRoute(config.Route{Transform: `{"text": "a & <b>", "at": 1, "list": [event, source]}`})
	require.NoError(t, err)
	in := inputOf("github", "issues", []byte(`{}`))
	body, contentType, err := x.apply(&in)
	require.NoError(t, err)
	require.Equal(t, `{"at":1,"list":["issues","github"],"text":"a & <b>"}`, string(body))
	require.Equal(t, "application/json", contentType)
}

// A route's headers map is lower-cased, whatever case a name was stored
// in: a Kafka delivery keeps its producer's spelling. Two names that
// differ only in case give the same one of their values on every
// evaluation (the first name in byte order), never whichever the map
// iteration met last.
func TestRouteHeadersAreLowerCasedAndStable(t *testing.T) {
	t.Parallel()
	x, err := compileRoute(config.Route{Transform: `{"id": headers["event_id"], "env": headers["x-env"]}`})
	require.NoError(t, err)
	for range 50 {
		in := ExprInput{Source: "orders", EventType: "order.confirmed", Body: []byte(`{}`), ContentType: "application/json",
			Header: http.Header{"event_id": {"lower"}, "Event_ID": {"mixed"}, "EVENT_ID": {"upper"}, "X-Env": {"prod"}}}
		body, _, err := x.apply(&in)
		require.NoError(t, err)
		require.JSONEq(t, `{"id": "upper", "env": "prod"}`, string(body))
	}
}
