package linediff_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/linediff"
)

// apply rebuilds b from a and the script, and counts the changes.
func apply(t *testing.T, a, b []string, edits []linediff.Edit) ([]string, int) {
	t.Helper()
	var out []string
	changes, ai := 0, 0
	for _, e := range edits {
		switch e.Op {
		case linediff.Equal:
			require.Equal(t, ai, e.A, "a is walked in order")
			require.Equal(t, a[e.A], b[e.B])
			out = append(out, a[e.A])
			ai++
		case linediff.Delete:
			require.Equal(t, ai, e.A)
			ai++
			changes++
		case linediff.Insert:
			out = append(out, b[e.B])
			changes++
		}
	}
	require.Equal(t, len(a), ai)
	return out, changes
}

// requireSame: the script rebuilt want.
func requireSame(t *testing.T, want, got []string) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, got)
		return
	}
	require.Equal(t, want, got)
}

func TestLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b    string
		changes int
	}{
		{"", "", 0},
		{"a b c", "a b c", 0},
		{"a b c", "", 3},
		{"", "x y", 2},
		{"a b c a b b a", "c b a b a c", 5}, // Myers' paper: D = 5
		{"x a b c", "a b c y", 2},
		{`{ "id": 1, "amount": 100, }`, `{ "id": 1, "amount": 200, }`, 2},
	} {
		a, b := strings.Fields(tc.a), strings.Fields(tc.b)
		edits, ok := linediff.Lines(a, b, 100)
		require.True(t, ok)
		got, changes := apply(t, a, b, edits)
		requireSame(t, b, got)
		require.Equal(t, tc.changes, changes, "%q → %q: a shortest script", tc.a, tc.b)
	}
	_, ok := linediff.Lines(strings.Fields("a b c d"), strings.Fields("w x y z"), 3)
	require.False(t, ok, "more changes than allowed")
}

func TestLinesRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d"}
	for range 300 {
		a, b := make([]string, r.IntN(20)), make([]string, r.IntN(20))
		for i := range a {
			a[i] = words[r.IntN(len(words))]
		}
		for i := range b {
			b[i] = words[r.IntN(len(words))]
		}
		edits, ok := linediff.Lines(a, b, 1000)
		require.True(t, ok)
		got, _ := apply(t, a, b, edits)
		requireSame(t, b, got)
	}
}

func TestSideBySide(t *testing.T) {
	t.Parallel()
	a := strings.Fields("1 2 3 4 5 6 7 8 old 10")
	b := strings.Fields("1 2 3 4 5 6 7 8 new new2 10")
	edits, ok := linediff.Lines(a, b, 100)
	require.True(t, ok)
	rows := linediff.SideBySide(a, b, edits, 2)
	require.Equal(t, []linediff.Row{
		{Gap: 6},
		{Left: linediff.Cell{N: 7, Text: "7"}, Right: linediff.Cell{N: 7, Text: "7"}},
		{Left: linediff.Cell{N: 8, Text: "8"}, Right: linediff.Cell{N: 8, Text: "8"}},
		{Left: linediff.Cell{N: 9, Text: "old", Changed: true}, Right: linediff.Cell{N: 9, Text: "new", Changed: true}},
		{Right: linediff.Cell{N: 10, Text: "new2", Changed: true}},
		{Left: linediff.Cell{N: 10, Text: "10"}, Right: linediff.Cell{N: 11, Text: "10"}},
	}, rows)

	// One equal line between two changes' contexts is shown, not folded
	// into a gap of one.
	a = strings.Fields("x 2 3 4 y")
	b = strings.Fields("X 2 3 4 Y")
	edits, ok = linediff.Lines(a, b, 100)
	require.True(t, ok)
	rows = linediff.SideBySide(a, b, edits, 1)
	require.Len(t, rows, 5)
	require.Equal(t, linediff.Row{Left: linediff.Cell{N: 3, Text: "3"}, Right: linediff.Cell{N: 3, Text: "3"}}, rows[2])
	for _, r := range rows {
		require.Zero(t, r.Gap)
	}
}
