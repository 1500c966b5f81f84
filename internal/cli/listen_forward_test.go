package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/verify"
)

// The app gets the provider's headers as stored, the local signature in
// place of every signature the provider made, and hookinbox's ids.
func TestForwardHeaders(t *testing.T) {
	t.Parallel()
	it := admin.StreamItem{ID: 42, Source: "github", DeliveryID: "d-1", EventType: "push", Headers: map[string][]string{
		"X-Github-Event": {"push"}, "X-Github-Delivery": {"d-1"}, "Content-Type": {"application/json; charset=utf-8"},
		"X-Hub-Signature":     {"sha1=production"},
		"X-Hub-Signature-256": {"sha256=production"},
		"content-length":      {"999"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"GitHub-Hookshot/abc"},
	}}
	signer, err := verify.NewSigner(verify.ProviderGitHub, "local")
	require.NoError(t, err)
	signed, err := signer.Sign([]byte(`{}`), verify.Message{ID: "d-1", EventType: "push"}, time.Now())
	require.NoError(t, err)
	h := forwardHeaders(it, signed)
	require.Equal(t, signed.Get("X-Hub-Signature-256"), h.Get("X-Hub-Signature-256"))
	require.NotContains(t, h, "X-Hub-Signature", "the provider's other signature, made with the production secret")
	require.NotContains(t, h, "Content-Length")
	require.NotContains(t, h, "Accept-Encoding")
	require.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"))
	require.Equal(t, "GitHub-Hookshot/abc", h.Get("User-Agent"))
	require.Equal(t, "push", h.Get("X-Github-Event"))
	require.Equal(t, "42", h.Get("Hookinbox-Inbox-Id"))
	require.Equal(t, "github", h.Get("Hookinbox-Source"))
	require.Equal(t, "d-1", h.Get("Hookinbox-Delivery-Id"))
}

// A delivery's line shows what a sender wrote in its ids and event type
// escaped: none of it reaches the terminal as a control character.
func TestListenLineEscapesControls(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	f := &forwarder{out: &out}
	it := admin.StreamItem{ID: 7, Source: "github", DeliveryID: "d\x1b[2J", EventType: "push\x1b]0;owned\a\u202e",
		ReceivedAt: time.Now()}
	f.printResult(it, forwardResult{status: "200 OK", code: 200, took: 3 * time.Millisecond})
	f.printResult(it, forwardResult{err: &appError{"refused\x1b[31m\nsecond line"}})
	line := out.String()
	require.Contains(t, line, `  #7  github  push\x1b]0;owned\a\u202e  d\x1b[2J  -> 200 OK  3 ms`+"\n")
	require.Contains(t, line, `-> failed: refused\x1b[31m\nsecond line (not sent again)  0 ms`+"\n")
	require.NotContains(t, line, "\x1b")
	require.NotContains(t, line, "\u202e")
	require.Equal(t, 2, strings.Count(line, "\n"), "one line a delivery")
}

type appError struct{ msg string }

func (e *appError) Error() string { return e.msg }
