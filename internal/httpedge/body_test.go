package httpedge

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestReadDeclaredGrowsWithWhatArrives(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, firstRead - 1, firstRead, firstRead + 1, 3*firstRead + 7} {
		want := bytes.Repeat([]byte("abcdefg"), n/7+1)[:n]
		got, err := readDeclared(iotest.HalfReader(bytes.NewReader(want)), n)
		require.NoError(t, err, n)
		require.Equal(t, want, got, n)
		require.LessOrEqual(t, cap(got), max(2*n, 1), "a %d-byte body's buffer", n)
	}
	_, err := readDeclared(bytes.NewReader([]byte("short")), 10)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestReadChunkedStopsPastTheLimit(t *testing.T) {
	t.Parallel()
	got, err := readChunked(bytes.NewReader([]byte("12345")), 5)
	require.NoError(t, err)
	require.Equal(t, "12345", string(got))
	_, err = readChunked(bytes.NewReader([]byte("123456")), 5)
	require.ErrorIs(t, err, ErrBodyTooLarge)
}
