package handlers_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// processedLine is one "delivery processed" log line.
type processedLine struct {
	at         time.Time
	suppressed int // suppressed_since_last; 0 when absent
}

var processedLineRE = regexp.MustCompile(`(?m)^time=(\S+) level=INFO msg="delivery processed" .*?(?:suppressed_since_last=(\d+))?$`)

func processedLines(t *testing.T, logs string) []processedLine {
	t.Helper()
	var out []processedLine
	for _, m := range processedLineRE.FindAllStringSubmatch(logs, -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		require.NoError(t, err)
		l := processedLine{at: at}
		if m[2] != "" {
			l.suppressed, _ = strconv.Atoi(m[2])
		}
		out = append(out, l)
	}
	return out
}

// Processed deliveries' info lines are capped per second
// (jobs.ClientConfig.LogDeliveriesPerSecond): deliveries processed
// together write the second's lines, and the next line written counts the
// rest. However the machine spreads the processing over seconds, no three
// lines fall within one second, and every delivery has its line or is
// counted by a later one.
func TestProcessedLinesPerSecond(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{logLines: 2})
	// Recorded before the client fetches them (it polls every 100 ms), so
	// that they are processed together.
	at := time.Now().Add(-time.Hour)
	ids := make([]int64, 8)
	for i := range ids {
		ids[i] = b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/lines", i+1, "t", at), time.Time{})
	}
	for _, id := range ids {
		b.WaitStatus(t, id, "processed")
	}
	first := processedLines(t, b.log.String())

	// A second later the limiter's window has moved on, so the next
	// delivery's line is written, and counts whatever the eight held back.
	time.Sleep(time.Second)
	b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/lines", 9, "t", at), time.Time{})
	var lines []processedLine
	require.Eventually(t, func() bool {
		lines = processedLines(t, b.log.String())
		return len(lines) == len(first)+1
	}, 15*time.Second, 10*time.Millisecond, "the last delivery's line")

	// Lines two apart are a second apart, less the moment between the
	// limiter's decision and the line's own time (allowed half a second).
	for i := 2; i < len(lines); i++ {
		require.GreaterOrEqual(t, lines[i].at.Sub(lines[i-2].at), 500*time.Millisecond, "line %d: two lines a second", i)
	}
	counted := len(lines)
	for _, l := range lines {
		counted += l.suppressed
	}
	require.Equal(t, 9, counted, "lines written plus lines held back, counted by a later line")
	require.Equal(t, 8-len(first), lines[len(lines)-1].suppressed, "the last line counts what the eight held back")
}
