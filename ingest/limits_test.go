package ingest_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
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

// A NUL in a header value is refused up front: the inbox's jsonb headers
// cannot hold it, so the delivery would otherwise fail to store on every
// retry, and fail its batch neighbours. Go's client will not send one, so
// the request is written by hand.
func TestNULInHeaderIsRefused(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		b := setupWith(t, opts)
		body := githubBody(70)
		var req strings.Builder
		req.WriteString("POST /webhooks/github HTTP/1.1\r\nHost: x\r\nConnection: close\r\n")
		for k, vs := range githubHeaders(t, githubSecret, "gh-nul-header", body) {
			for _, v := range vs {
				req.WriteString(k + ": " + v + "\r\n")
			}
		}
		req.WriteString("X-Custom: a\x00b\r\n")
		req.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
		req.Write(body)

		conn, err := net.Dial("tcp", b.addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.Write([]byte(req.String()))
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
		require.Contains(t, string(raw), `"code":"invalid_header"`)
		require.Contains(t, string(raw), "X-Custom")
		require.Equal(t, counts{0, 0}, b.counts(t))
	})
}
