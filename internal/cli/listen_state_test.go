package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A saved cursor belongs to its admin URL, sources and events: the
// stream moves a cursor past what an event filter refuses, so a listen of
// more events, or of none named, starts from a cursor of its own.
func TestListenCursorIsKeptPerSourcesAndEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	narrow, ok, err := openCursor(dir, "http://127.0.0.1:8081", []string{"stripe", "github"}, []string{"invoice.*", "push"})
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, narrow.save(42))

	same, ok, err := openCursor(dir, "http://127.0.0.1:8081", []string{"github", "stripe"}, []string{"push", "invoice.*"})
	require.NoError(t, err)
	require.True(t, ok, "the same sources and events, in another order")
	require.Equal(t, int64(42), same.After)

	for name, events := range map[string][]string{"none named": nil, "more": {"invoice.*", "push", "issues"}} {
		_, ok, err := openCursor(dir, "http://127.0.0.1:8081", []string{"github", "stripe"}, events)
		require.NoError(t, err)
		require.False(t, ok, name)
	}
	_, ok, err = openCursor(dir, "http://127.0.0.1:8081", []string{"github"}, []string{"push", "invoice.*"})
	require.NoError(t, err)
	require.False(t, ok, "other sources")
}
