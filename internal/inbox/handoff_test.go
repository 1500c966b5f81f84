package inbox

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A HandOff holds at most HandOffBytes, dropping the oldest first; each
// entry is taken once; an entry never taken (another replica processed
// its delivery) does not let the queue of ids grow past its bound; a nil
// HandOff holds nothing.
func TestHandOffIsBounded(t *testing.T) {
	t.Parallel()
	h := NewHandOff()
	payload := bytes.Repeat([]byte("x"), HandOffBytes/4-entrySize(http.Header{"A": {"b"}}, nil)) // four fill it
	for id := int64(1); id <= 5; id++ {
		h.Put(id, http.Header{"A": {"b"}}, payload)
	}
	_, _, ok := h.Take(1)
	require.False(t, ok, "the oldest went first")
	for id := int64(2); id <= 5; id++ {
		_, p, ok := h.Take(id)
		require.True(t, ok, "id %d", id)
		require.Len(t, p, len(payload))
		_, _, again := h.Take(id)
		require.False(t, again, "id %d taken twice", id)
	}
	require.Zero(t, h.bytes)
	require.Empty(t, h.entries)

	h.Put(100, nil, []byte("never taken"))
	for id := int64(101); id < 101+3*handOffEntries; id++ {
		h.Put(id, nil, []byte("y"))
		h.Take(id)
	}
	require.LessOrEqual(t, len(h.order), handOffEntries+1)
	_, _, ok = h.Take(100)
	require.False(t, ok, "dropped once the queue reached its bound")

	var none *HandOff
	none.Put(1, nil, []byte("z"))
	_, _, ok = none.Take(1)
	require.False(t, ok)
}

// Headers the inbox's jsonb would not keep byte for byte are not held:
// processing then reads what the row holds.
func TestHandOffHoldsOnlyWhatTheRowKeepsAsIs(t *testing.T) {
	t.Parallel()
	h := NewHandOff()
	h.Put(1, http.Header{"X-Bad": {"\xff\xfe"}}, []byte("{}"))
	h.Put(2, http.Header{"X-Bad\xff": {"v"}}, []byte("{}"))
	h.Put(3, http.Header{"X-Good": {"caf\u00e9 \u2028"}}, []byte("{}"))
	for id, want := range map[int64]bool{1: false, 2: false, 3: true} {
		_, _, ok := h.Take(id)
		require.Equal(t, want, ok, "id %d", id)
	}
}

// What an entry costs is what it holds, not only the bytes a client sent:
// a header of many empty values, or a small body in a large buffer, counts
// its memory, so that HandOffBytes bounds the memory held.
func TestHandOffCountsWhatAnEntryHolds(t *testing.T) {
	t.Parallel()
	for name, entry := range map[string]struct {
		headers http.Header
		payload []byte
	}{
		"empty header values": {http.Header{"X": make([]string, 4000)}, []byte("{}")},
		"a large buffer":      {nil, make([]byte, 2, 64<<10)},
	} {
		h := NewHandOff()
		for id := int64(1); id <= 1000; id++ {
			h.Put(id, entry.headers, entry.payload)
		}
		require.LessOrEqual(t, h.bytes, HandOffBytes, name)
		_, _, ok := h.Take(1)
		require.False(t, ok, "%s: the oldest went first", name)
		_, _, ok = h.Take(1000)
		require.True(t, ok, "%s: the newest is held", name)
	}
}
