package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/verify"
)

func TestEscapeControls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, line, text, json string
	}{
		{in: "plain ascii", line: "plain ascii", text: "plain ascii", json: "plain ascii"},
		{in: "héllo ✓ 日本 🙂", line: "héllo ✓ 日本 🙂", text: "héllo ✓ 日本 🙂", json: "héllo ✓ 日本 🙂"},
		{in: "\x1b]0;PWNED\x07\x1b[2J", line: `\x1b]0;PWNED\a\x1b[2J`, text: `\x1b]0;PWNED\a\x1b[2J`, json: `\u001b]0;PWNED\u0007\u001b[2J`},
		{in: "a\nb\tc\rd", line: `a\nb\tc\rd`, text: "a\nb\tc\\rd", json: "a\nb\tc\\u000dd"},
		{in: "del\x7f c1\u009b[2J nel\u0085", line: `del\x7f c1\u009b[2J nel\u0085`, text: `del\x7f c1\u009b[2J nel\u0085`, json: `del\u007f c1\u009b[2J nel\u0085`},
		{in: "bad \xff\x9b byte", line: `bad \xff\x9b byte`, text: `bad \xff\x9b byte`, json: `bad \xff\x9b byte`},
		{in: `a \x1b written as text`, line: `a \x1b written as text`, text: `a \x1b written as text`, json: `a \x1b written as text`},
		{in: "\ufffd is a character", line: "\ufffd is a character", text: "\ufffd is a character", json: "\ufffd is a character"},
		// An id that reads as another: a right-to-left override, a zero width space.
		{in: "evt_\u202e1cba\u200b", line: `evt_\u202e1cba\u200b`, text: `evt_\u202e1cba\u200b`, json: `evt_\u202e1cba\u200b`},
	} {
		require.Equal(t, tc.line, printable(tc.in), "printable(%q)", tc.in)
		require.Equal(t, tc.text, printableText(tc.in), "printableText(%q)", tc.in)
		require.Equal(t, tc.json, printableJSON(tc.in), "printableJSON(%q)", tc.in)
	}
	// JSON output stays JSON, with the same strings.
	in := `{"k":"del` + "\x7f" + ` c1` + "\u009b" + `"}`
	var a, b map[string]string
	require.NoError(t, json.Unmarshal([]byte(in), &a))
	require.NoError(t, json.Unmarshal([]byte(printableJSON(in)), &b))
	require.Equal(t, a, b)
}

// hostileNote retitles the terminal (OSC 0, ended by BEL) and clears it.
const hostileNote = "\x1b]0;PWNED\x07\x1b[2J"

// Deliveries carrying terminal escapes, one through ingest over HTTP and
// one stored through the inbox with them in every field, print escaped in
// every form the deliveries command has.
func TestDeliveriesPrintControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	b.serve(t)

	// Go's HTTP client refuses control characters in header values, a
	// hostile sender does not: the request is written by hand.
	body := []byte(`{"action":"opened","note":"del` + "\x7f" + ` csi` + "\u009b" + `2J"}`)
	status := b.postRaw(t, "github", body, "gh-escapes-1", "issues", "X-Note: "+hostileNote)
	require.Equal(t, http.StatusAccepted, status, "log:\n%s", b.stderr)

	// What verify refuses over HTTP (control characters in ids and event
	// types, a body that is not JSON) a library user's own code can still
	// record, and the stored row is what the CLI prints.
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	river, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	_, err = ingest.NewInbox(pool, river).Record(context.Background(), ingest.Delivery{
		Source: "github", DeliveryID: "id" + hostileNote, EventType: "ev" + hostileNote,
		Headers: http.Header{"X-Note": {hostileNote}, "X-Evil\x1b[2J": {"v"}},
		Payload: []byte("line one " + hostileNote + "\nline two\r overwritten"),
	})
	require.NoError(t, err)

	requireEscaped := func(t *testing.T, out string) {
		t.Helper()
		for _, raw := range []string{"\x1b", "\x07", "\x7f", "\u009b", "\r"} {
			require.NotContains(t, out, raw, "raw %q in the output:\n%q", raw, out)
		}
	}
	escapedNote := `\x1b]0;PWNED\a\x1b[2J`

	code, out := b.run(t, "deliveries")
	require.Equal(t, 0, code, out)
	requireEscaped(t, out)
	require.Contains(t, out, "ev"+escapedNote)
	require.Contains(t, out, "id"+escapedNote)

	code, out = b.run(t, "deliveries", "1")
	require.Equal(t, 0, code, out)
	requireEscaped(t, out)
	require.Contains(t, out, "\n  X-Note: "+escapedNote+"\n")
	require.Contains(t, out, `"note": "del\x7f csi\u009b2J"`)

	code, out = b.run(t, "deliveries", "2")
	require.Equal(t, 0, code, out)
	requireEscaped(t, out)
	require.Regexp(t, `(?m)^delivery 2\s+github ev\\x1b\]0;PWNED\\a\\x1b\[2J, `, out)
	require.Contains(t, out, "\n  X-Note: "+escapedNote+"\n")
	require.Contains(t, out, "\n  X-Evil\\x1b[2J: v\n")
	require.Contains(t, out, "\npayload\n  line one "+escapedNote+"\nline two\\r overwritten\n", "newlines kept, the rest escaped")

	for _, id := range []string{"1", "2"} {
		code, out = b.run(t, "deliveries", id, "--json")
		require.Equal(t, 0, code, out)
		requireEscaped(t, out)
		var d struct {
			Headers map[string][]string `json:"headers"`
			Payload string              `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &d), "--json output is still JSON:\n%s", out)
		require.Equal(t, []string{hostileNote}, d.Headers["X-Note"], "and says what was stored")
		if id == "1" {
			require.Equal(t, string(body), d.Payload)
		}
	}
}

// postRaw POSTs a GitHub delivery signed with the source's secret, the
// extra header lines written as they are, and returns the status.
func (b *testBundle) postRaw(t *testing.T, source string, body []byte, id, event string, extra ...string) int {
	t.Helper()
	cfg, err := config.Load(b.configPath, b.env.lookup)
	require.NoError(t, err)
	src, ok := cfg.Source(source)
	require.True(t, ok)
	signer, err := verify.NewConfigSigner(src.VerifyConfig())
	require.NoError(t, err)
	h, err := signer.Sign(body, verify.Message{ID: id, EventType: event}, time.Now())
	require.NoError(t, err)

	var req bytes.Buffer
	fmt.Fprintf(&req, "POST /webhooks/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n", source, b.listen, len(body))
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&req, "%s: %s\r\n", name, strings.Join(h[name], ", "))
	}
	for _, line := range extra {
		fmt.Fprintf(&req, "%s\r\n", line)
	}
	req.WriteString("\r\n")
	req.Write(body)

	conn, err := net.DialTimeout("tcp", b.listen, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = conn.Write(req.Bytes())
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// What a webhook endpoint or an admin URL answers is printed escaped too,
// in a command's output and in its error.
func TestRemoteAnswersPrintControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	b := setup(t, "postgres://unused")
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "no"+hostileNote)
	}))
	t.Cleanup(hostile.Close)
	escapedNote := `\x1b]0;PWNED\a\x1b[2J`

	code, out := b.send(t, "--source", "github", "--event", "issues", "--url", hostile.URL+"/webhooks/github")
	require.Equal(t, 1, code, out)
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, "400 Bad Request\nno"+escapedNote+"\n")

	b.env.adminTransport = nil // not the admin API: nothing of its answer is the document's
	code, out = b.run(t, "deliveries", "--admin-url", hostile.URL)
	require.Equal(t, 1, code, out)
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, "hookinbox deliveries: GET /admin/deliveries: 400 Bad Request no"+escapedNote+"\n")
}
