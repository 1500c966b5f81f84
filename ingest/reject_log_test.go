package ingest_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/verify"
)

// Refused requests leave a line at info naming the source, the code and
// the caller, and a flood of one kind is rate-limited to a line per
// interval, the next line counting what was held back.
func TestRejectedRequestsAreLoggedRateLimited(t *testing.T) {
	t.Parallel()
	logger, logs := testlog.New(t)
	b := setupWith(t, setupOpts{logger: logger, rejectEvery: time.Hour})

	body := githubBody(7)
	for range 50 {
		require.Equal(t, http.StatusUnauthorized, b.post(t, "/webhooks/github", body, githubHeaders(t, "forged", "gh-reject", body)).status)
	}
	require.Equal(t, http.StatusNotFound, b.post(t, "/webhooks/gitlab", body, http.Header{}).status)
	stripe := stripeBody("evt_reject")
	require.Equal(t, http.StatusBadRequest, b.post(t, "/webhooks/stripe", stripe, http.Header{}).status)
	require.Equal(t, http.StatusRequestEntityTooLarge, b.post(t, "/webhooks/stripe",
		make([]byte, maxBody+1), signed(t, verify.ProviderStripe, stripeSecret, stripe, verify.Message{}, time.Now())).status)

	text := logs.String()
	lines := func(code string) []string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, `msg="request rejected"`) && strings.Contains(l, "code="+code+" ") {
				out = append(out, l)
			}
		}
		return out
	}
	sig := lines("invalid_signature")
	require.Len(t, sig, 1, "50 refusals within the interval make one line:\n%s", text)
	require.Contains(t, sig[0], "source=github")
	require.Contains(t, sig[0], "status=401")
	require.Contains(t, sig[0], "remote_addr=127.0.0.1")
	require.Len(t, lines("unknown_source"), 1, text)
	require.Contains(t, lines("unknown_source")[0], "source=_unknown", "names from URLs are not echoed as sources")
	require.Len(t, lines("missing_header"), 1, text)
	require.Contains(t, lines("missing_header")[0], "source=stripe")
	require.Len(t, lines("payload_too_large"), 1, text)
	require.Contains(t, lines("payload_too_large")[0], "source=stripe")
}

// Once the interval has passed, the next refusal is logged again with the
// count of the ones held back.
func TestRejectedRequestLogCountsSuppressedLines(t *testing.T) {
	t.Parallel()
	logger, logs := testlog.New(t)
	b := setupWith(t, setupOpts{logger: logger, rejectEvery: 300 * time.Millisecond})
	body := githubBody(8)
	for range 5 {
		b.post(t, "/webhooks/github", body, githubHeaders(t, "forged", "gh-reject-2", body))
	}
	time.Sleep(350 * time.Millisecond) // the interval under test
	b.post(t, "/webhooks/github", body, githubHeaders(t, "forged", "gh-reject-2", body))
	require.Equal(t, 2, strings.Count(logs.String(), `msg="request rejected"`), logs.String())
	require.Contains(t, logs.String(), "suppressed_since_last=4")
}

// Stored deliveries' info lines are capped per second
// (LogDeliveriesPerSecond): every delivery is either logged or counted on
// a later line, and a logger at debug gets every line.
func TestDeliveryLinesPerSecond(t *testing.T) {
	t.Parallel()
	post := func(t *testing.T, b *testBundle, n, from int) {
		for i := from; i < from+n; i++ {
			body := githubBody(9000 + i)
			r := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, fmt.Sprintf("gh-lines-%d", i), body))
			require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
		}
	}

	t.Run("info", func(t *testing.T) {
		t.Parallel()
		logger, logs := testlog.New(t)
		b := setupWith(t, setupOpts{logger: logger, linesPerSec: 2})
		start := time.Now()
		post(t, b, 6, 0)
		burst := time.Since(start)
		lines := strings.Count(logs.String(), `msg="delivery accepted"`)
		if burst < time.Second {
			require.Equal(t, 2, lines, "six deliveries within a second, two lines")
		}
		time.Sleep(time.Second) // the window under test
		post(t, b, 1, 6)
		require.Equal(t, lines+1, strings.Count(logs.String(), `msg="delivery accepted"`), logs.String())
		last := logs.String()[strings.LastIndex(logs.String(), `msg="delivery accepted"`):]
		require.Contains(t, last, "delivery_id=gh-lines-6")
		if lines < 6 {
			require.Contains(t, last, fmt.Sprintf("suppressed_since_last=%d", 6-lines))
		}
	})
	t.Run("debug", func(t *testing.T) {
		t.Parallel()
		var logs testlog.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		b := setupWith(t, setupOpts{logger: logger, linesPerSec: 2})
		post(t, b, 6, 100)
		require.Equal(t, 6, strings.Count(logs.String(), `msg="delivery accepted"`), logs.String())
		require.NotContains(t, logs.String(), "suppressed_since_last")
	})
}
