// Package testlog captures logs in tests: a buffer that the code under test
// writes to from many goroutines while the test reads it, printed when the
// test fails.
package testlog

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer safe for concurrent writes and reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// New returns a text logger writing to a Buffer that is printed with the
// test's output if the test fails.
func New(t testing.TB) (*slog.Logger, *Buffer) {
	buf := &Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo})), buf
}
