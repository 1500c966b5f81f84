package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShowReadsBackWhatARunWrote reads the newest committed results file of
// each scenario -show prints as a report: its typed result must hold every
// field of the file (marshalled again, the same JSON), and the report must
// print without a formatting error.
func TestShowReadsBackWhatARunWrote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		read    func([]byte) (any, error)
		want    string
	}{
		{"*Z.json", readAs[results], "ingest, closed loop"},
		{"*Z.steady.json", readAs[steadyResult], "highest sustained step"},
		{"*Z.destinations.json", readAs[destinationsResult], "destinations"},
		{"*Z.destinations-ordered.json", readAs[destinationsResult], "route issues, ordered"},
		{"*Z.history.json", readAs[steadyResult], "deliveries of history"},
		{"*Z.retention.json", readAs[retentionResult], "goal: ack p99 during the drop pass"},
		{"*Z.kafka.json", readAs[kafkaResult], "kafka"},
		{"*Z.tracing.json", readAs[tracingResult], "tracing"},
		{"*Z.upgrade.json", readAs[upgradeResult], "held, prepared over plain"},
		{"*Z.path.json", readAs[pathResult], "machine CPU per forwarded delivery ÷ per pgbench transaction"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			t.Parallel()
			files, err := filepath.Glob(filepath.Join("..", "..", "bench", "results", tc.pattern))
			require.NoError(t, err)
			require.NotEmpty(t, files)
			path := slices.Max(files) // names are UTC times

			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			typed, err := tc.read(raw)
			require.NoError(t, err)
			again, err := json.Marshal(typed)
			require.NoError(t, err)
			require.JSONEq(t, string(raw), string(again), "%s: a field is lost on the way through its type", path)

			var out bytes.Buffer
			require.NoError(t, show(&out, path))
			require.Contains(t, out.String(), tc.want)
			require.False(t, strings.Contains(out.String(), "%!"), "formatting error in:\n%s", out.String())
		})
	}
}

func readAs[R any](b []byte) (any, error) {
	var r R
	err := json.Unmarshal(b, &r)
	return r, err
}
