package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTallyIDsCountsRepeatsOnce(t *testing.T) {
	t.Parallel()
	distinct, repeated := tallyIDs([]string{"a", "b", "a", "c", "a", "b"})
	require.Equal(t, int64(3), distinct)
	require.Equal(t, int64(2), repeated, "a and b came more than once; a's third time is no new repeat")
	distinct, repeated = tallyIDs(nil)
	require.Zero(t, distinct)
	require.Zero(t, repeated)
}

// TestKafkaMessagesKeyByIssue: each message is keyed by its issue's
// node_id, the resource hookinbox reads with resource_field, so a key
// names one issue and two issues have two keys.
func TestKafkaMessagesKeyByIssue(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	var issues []payload
	for i := range 3 {
		repo, number := issueOf(i)
		body, err := issueEvent(rng, repo, number, 2048)
		require.NoError(t, err)
		issues = append(issues, payload{body: body})
	}
	msgs, err := kafkaMessages(issues)
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		var ev struct {
			Issue struct {
				NodeID string `json:"node_id"`
			} `json:"issue"`
		}
		require.NoError(t, json.Unmarshal(issues[i].body, &ev))
		require.Equal(t, ev.Issue.NodeID, string(m.key))
		require.Equal(t, issues[i].body, m.body)
	}
	require.NotEqual(t, msgs[0].key, msgs[1].key)

	_, err = kafkaMessages([]payload{{body: []byte(`{"action":"opened"}`)}})
	require.Error(t, err, "a body without issue.node_id")
}

func TestPerSecWithoutTime(t *testing.T) {
	t.Parallel()
	require.Zero(t, perSec(100, 0))
	require.Equal(t, 50.0, perSec(100, 2))
}

// TestShowReadsBackKafkaResults is TestShowReadsBackWhatARunWrote for
// the kafka scenario's kept results file.
func TestShowReadsBackKafkaResults(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "bench", "results", "*Z.kafka.json"))
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skip("no kafka results file kept")
	}
	path := slices.Max(files)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	typed, err := readAs[kafkaResult](raw)
	require.NoError(t, err)
	again, err := json.Marshal(typed)
	require.NoError(t, err)
	require.JSONEq(t, string(raw), string(again), "%s: a field is lost on the way through its type", path)

	var out bytes.Buffer
	require.NoError(t, show(&out, path))
	require.Contains(t, out.String(), "relay, the same worker resumed")
	require.False(t, strings.Contains(out.String(), "%!"), "formatting error in:\n%s", out.String())
}
