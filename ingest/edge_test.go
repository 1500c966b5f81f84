package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/procmem"
)

// announce opens a connection that sends a webhook's headers announcing
// a body of n bytes, and sent bytes of it: past what fasthttp reads before
// the handler runs (8 KiB) and past ReadBody's first buffer (64 KiB), so
// that the body is being read, in a buffer that must have grown with what
// arrived, not to what was announced.
func announce(t *testing.T, addr string, n, sent int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", n, strings.Repeat("a", sent))
	require.NoError(t, err)
	return conn
}

// fromAddress is a client whose connections come from another loopback
// address than the test's other clients.
func fromAddress(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// Headers that announce a large body and send a part of it reserve
// nothing on the server: a connection holds what its client sent. One
// client's connections beyond max_connections_per_address are refused,
// and a signed delivery from another address is acknowledged while they
// hold theirs. Not parallel: it reads the process's heap.
func TestAnnouncedBodyReservesNothing(t *testing.T) {
	const (
		announced = 5 << 20
		held      = 40
		perAddr   = 30
	)
	b := setupWith(t, setupOpts{maxBody: announced, perAddress: perAddr, readTimeout: 5 * time.Second})
	before := procmem.HeapInUse()

	refused := 0
	for range held {
		conn := announce(t, b.addr, announced, 80<<10)
		// Refused connections are answered at once; the others wait for
		// their body and say nothing until read_timeout.
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			resp.Body.Close()
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			require.Equal(t, "1", resp.Header.Get("Retry-After"))
			refused++
		}
	}
	require.Equal(t, held-perAddr, refused, "connections from one address beyond max_connections_per_address")

	body := githubBody(10)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, b.baseURL+"/webhooks/github", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = githubHeaders(t, githubSecret, "gh-beside-announced", body)
	start := time.Now()
	resp, err := fromAddress("127.0.0.2").Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Less(t, time.Since(start), 2*time.Second)

	// fasthttp reserved a power of two above the announced length, 8 MiB
	// here, for each connection: 240 MiB for the 30 held. Read as it
	// arrives, each holds 8 KiB read ahead and a 128 KiB buffer.
	grew := int64(procmem.HeapInUse()) - int64(before)
	require.Less(t, grew, int64(32<<20), "heap grew by %d MiB while %d connections announced %d MiB each", grew>>20, perAddr, announced>>20)
}

// A body that arrives whole but is over max_body_bytes, announced by
// chunks rather than a Content-Length, is refused with 413 and stores
// nothing.
func TestChunkedBodyOverTheLimitIs413(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := []byte(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("a", maxBody)))
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, b.baseURL+"/webhooks/github", struct{ *bytes.Reader }{bytes.NewReader(body)})
	require.NoError(t, err)
	req.Header = githubHeaders(t, githubSecret, "gh-chunked-large", body)
	req.ContentLength = -1 // a reader of unknown length: sent in chunks
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Equal(t, counts{0, 0}, b.counts(t))

	// Under the limit, chunks make the same delivery as a Content-Length.
	small := githubBody(100)
	req, err = http.NewRequestWithContext(context.Background(), http.MethodPost, b.baseURL+"/webhooks/github", struct{ *bytes.Reader }{bytes.NewReader(small)})
	require.NoError(t, err)
	req.Header = githubHeaders(t, githubSecret, "gh-chunked-small", small)
	req.ContentLength = -1
	resp, err = b.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Equal(t, counts{1, 1}, b.counts(t))
}

// answers writes raw to a new connection and reads the answers it gets
// until the connection closes (closed) or stays quiet for 300ms.
func answers(t *testing.T, addr string, raw string) (statuses []int, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte(raw))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	for {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			var ne net.Error
			return statuses, !(errors.As(err, &ne) && ne.Timeout())
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
}

// smuggled is a body that ends with a request of its own: what fasthttp
// would parse next if the body stayed unread on the connection.
func smuggled(n int) string {
	hidden := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	return strings.Repeat("A", n-len(hidden)) + hidden
}

// A body that no handler reads is never taken for the next request: a
// long one closes the connection after its answer; a short one, which
// fasthttp read whole, is dropped and the connection carries the next
// request the client really sent.
func TestAnUnreadBodyIsNeverTakenForARequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	long := smuggled(9000)
	for _, head := range []string{"POST /webhooks/nosuch", "PUT /webhooks/github", "GET /healthz", "POST /elsewhere"} {
		raw := fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", head, len(long), long)
		statuses, closed := answers(t, b.addr, raw)
		require.Len(t, statuses, 1, "%s: the request hidden in its body was answered", head)
		require.True(t, closed, "%s: the connection stays open on an unread body", head)
	}

	short := smuggled(200)
	raw := fmt.Sprintf("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%sGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n", len(short), short)
	statuses, closed := answers(t, b.addr, raw)
	require.Equal(t, []int{http.StatusOK, http.StatusOK}, statuses, "the hidden request answered, or the real second one not")
	require.False(t, closed, "a short unread body, dropped, need not cost the connection")
}
