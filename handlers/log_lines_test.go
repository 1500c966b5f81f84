package handlers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Processed deliveries' info lines are capped per second
// (jobs.ClientConfig.LogDeliveriesPerSecond): a batch processed at once
// writes the second's lines, and the next line counts the rest.
func TestProcessedLinesPerSecond(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{logLines: 2})
	// Recorded before the client fetches them (it polls every 100 ms), so
	// they are processed together, within a second.
	at := time.Now().Add(-time.Hour)
	ids := make([]int64, 8)
	for i := range ids {
		ids[i] = b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/lines", i+1, "t", at), time.Time{})
	}
	for _, id := range ids {
		b.waitStatus(t, id, "processed")
	}

	time.Sleep(time.Second) // the window under test
	last := b.deliver(t, "github", newID("gh"), "issues", issuePayload("acme/lines", 9, "t", at), time.Time{})
	lastLine := fmt.Sprintf("inbox_id=%d ", last)
	require.Eventually(t, func() bool {
		logs := b.log.String()
		i := strings.LastIndex(logs, `msg="delivery processed"`)
		return i >= 0 && strings.Contains(logs[i:], lastLine)
	}, 15*time.Second, 10*time.Millisecond, "the last delivery's line")
	logs := b.log.String()
	first := strings.Count(logs, `msg="delivery processed"`) - 1
	require.LessOrEqual(t, first, 4, "eight processed together: two lines a second")
	tail := logs[strings.LastIndex(logs, `msg="delivery processed"`):]
	require.Contains(t, tail, fmt.Sprintf("suppressed_since_last=%d", 8-first))
}
