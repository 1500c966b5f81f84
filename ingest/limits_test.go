package ingest_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHeadersTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := githubBody(50)
	h := githubHeaders(t, githubSecret, "gh-huge-headers", body)
	h.Set("X-Padding", strings.Repeat("a", 20<<10))
	r := b.post(t, "/webhooks/github", body, h)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.status, "%s", r.raw)
	require.Equal(t, "request_headers_too_large", r.Error.Code)
	require.Equal(t, counts{0, 0}, b.counts(t))
}

// A client that drips its request is cut off at the read timeout instead
// of holding a connection and a goroutine forever.
func TestSlowClientIsCutOff(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{readTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", b.addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":"))
	require.NoError(t, err)

	start := time.Now()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, counts{0, 0}, b.counts(t))
}
