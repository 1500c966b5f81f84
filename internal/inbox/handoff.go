package inbox

import (
	"net/http"
	"sync"
	"unicode/utf8"
)

// Bounds of a HandOff: what it holds waits for processing, and a process
// that stores deliveries another replica processes never hands them on.
const (
	// HandOffBytes bounds the payloads and headers a HandOff holds: at a
	// thousand deliveries a second of 5 KB, some one and a half seconds of backlog.
	HandOffBytes = 8 << 20
	// handOffEntries bounds its entries however small, and the queue of
	// ids it evicts by.
	handOffEntries = 1 << 16
)

// HandOff passes the headers and payloads of the deliveries ingest stores
// to processing in the same process, which would otherwise read back what
// ingest has just written (inbox_payloads.sql): with one serve doing both,
// that read was a processing batch's largest (bench/README.md, Design
// decisions, "Payloads handed to processing"). It holds what the inbox
// row holds: headers as stored, credentials dropped, and only headers the
// row keeps byte for byte. A delivery it does not hold (another replica
// stored it, it was evicted, a replay) is read from the inbox. The oldest
// entries go first once it holds HandOffBytes. A nil *HandOff holds
// nothing.
type HandOff struct {
	mu      sync.Mutex
	entries map[int64]handOffEntry
	order   []int64 // put order, oldest first; taken ids stay until they reach the front
	bytes   int
}

type handOffEntry struct {
	headers http.Header
	payload []byte
	size    int
}

// NewHandOff returns an empty HandOff.
func NewHandOff() *HandOff {
	return &HandOff{entries: map[int64]handOffEntry{}}
}

// Put holds the stored headers and payload of inbox row id, put before its
// transaction commits: no processing takes an id whose row did not
// commit. Headers the inbox's jsonb would not keep byte for byte (not
// UTF-8) are not held: processing reads them from the row.
func (h *HandOff) Put(id int64, headers http.Header, payload []byte) {
	if h == nil {
		return
	}
	size := entrySize(headers, payload)
	for k, vs := range headers {
		if !utf8.ValidString(k) {
			return
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return
			}
		}
	}
	if size > HandOffBytes {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.entries[id]; ok {
		return
	}
	h.entries[id] = handOffEntry{headers: headers, payload: payload, size: size}
	h.order = append(h.order, id)
	h.bytes += size
	h.evict()
}

// Overheads counted beside the bytes of names, values and payload, so that
// HandOffBytes bounds the memory held: an empty header value still costs
// its string header in a slice, a name its map slot and slice header.
const (
	entryOverhead  = 64
	headerOverhead = 64
	valueOverhead  = 16
)

// entrySize is what an entry holds, its payload's whole buffer included.
func entrySize(headers http.Header, payload []byte) int {
	size := entryOverhead + cap(payload)
	for k, vs := range headers {
		size += headerOverhead + len(k) + valueOverhead*cap(vs)
		for _, v := range vs {
			size += len(v)
		}
	}
	return size
}

// evict drops the oldest entries past the bounds, and the taken ids at the
// front of the queue.
func (h *HandOff) evict() {
	n := 0
	for n < len(h.order) {
		id := h.order[n]
		e, held := h.entries[id]
		if held && h.bytes <= HandOffBytes && len(h.order)-n <= handOffEntries {
			break
		}
		if held {
			delete(h.entries, id)
			h.bytes -= e.size
		}
		n++
	}
	h.order = h.order[n:] // append moves the live ids to a new array as it grows
}

// Take returns and forgets the headers and payload held for id.
func (h *HandOff) Take(id int64) (http.Header, []byte, bool) {
	if h == nil {
		return nil, nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[id]
	if !ok {
		return nil, nil, false
	}
	delete(h.entries, id)
	h.bytes -= e.size
	return e.headers, e.payload, true
}

// Len is how many entries it holds.
func (h *HandOff) Len() int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// Forget drops what is held for ids: their transaction did not commit.
func (h *HandOff) Forget(ids ...int64) {
	for _, id := range ids {
		h.Take(id)
	}
}
