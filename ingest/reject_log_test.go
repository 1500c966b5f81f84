package ingest_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
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

// logLine is one log line with message msg.
type logLine struct {
	at         time.Time
	text       string
	suppressed int // suppressed_since_last; 0 when absent
}

var suppressedRE = regexp.MustCompile(`suppressed_since_last=(\d+)`)

func logLines(t *testing.T, logs, msg string) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, `msg="`+msg+`"`) {
			continue
		}
		stamp, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		require.NoError(t, err, l)
		line := logLine{at: at, text: l}
		if m := suppressedRE.FindStringSubmatch(l); m != nil {
			line.suppressed, _ = strconv.Atoi(m[1])
		}
		out = append(out, line)
	}
	return out
}

// accounted is how many events lines stand for: each line its own, plus
// the ones it says were held back before it.
func accounted(lines []logLine) int {
	n := len(lines)
	for _, l := range lines {
		n += l.suppressed
	}
	return n
}

// Once the interval has passed, the next refusal is logged again with the
// count of the ones held back. However slowly a loaded machine serves the
// refusals, lines are an interval apart and every refusal has its line or
// is counted by a later one.
func TestRejectedRequestLogCountsSuppressedLines(t *testing.T) {
	t.Parallel()
	const every = time.Second
	logger, logs := testlog.New(t)
	b := setupWith(t, setupOpts{logger: logger, rejectEvery: every})
	body := githubBody(8)
	for range 5 {
		b.post(t, "/webhooks/github", body, githubHeaders(t, "forged", "gh-reject-2", body))
	}
	time.Sleep(every + 50*time.Millisecond) // the interval under test: no line is less than it old
	b.post(t, "/webhooks/github", body, githubHeaders(t, "forged", "gh-reject-2", body))

	lines := logLines(t, logs.String(), "request rejected")
	// The line's time is taken a moment after the limiter's: half the
	// interval is room for that moment on a loaded machine.
	for i := 1; i < len(lines); i++ {
		require.GreaterOrEqual(t, lines[i].at.Sub(lines[i-1].at), every/2, "one line per interval:\n%s", logs.String())
	}
	require.Equal(t, 6, accounted(lines), "every refusal logged or counted:\n%s", logs.String())
	require.Less(t, len(lines), 6, "five refusals, nowhere near a second apart, share a line")
	require.Positive(t, lines[len(lines)-1].suppressed, "the last line counts the ones held back")
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
		post(t, b, 6, 0)
		before := len(logLines(t, logs.String(), "delivery accepted"))
		time.Sleep(time.Second) // the window under test: the next line is written
		post(t, b, 1, 6)
		lines := logLines(t, logs.String(), "delivery accepted")
		require.Len(t, lines, before+1, logs.String())
		require.Contains(t, lines[len(lines)-1].text, "delivery_id=gh-lines-6")
		// Two lines a second, however the six spread over seconds: lines
		// two apart are a second apart (less the moment between the
		// limiter's time and the line's), and every delivery is logged or
		// counted by a later line.
		for i := 2; i < len(lines); i++ {
			require.GreaterOrEqual(t, lines[i].at.Sub(lines[i-2].at), 500*time.Millisecond, "two lines a second:\n%s", logs.String())
		}
		require.Equal(t, 7, accounted(lines), logs.String())
		require.Less(t, before, 6, "six deliveries in a burst are not all logged")
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
