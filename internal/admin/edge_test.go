package admin_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
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

// Headers that announce a body of the admin's limit and send one byte
// of it reserve nothing, whether the Host is ours or not, and an operator
// is answered beside them. Not parallel: it reads the process's heap.
func TestAdminAnnouncedBodyReservesNothing(t *testing.T) {
	b := setup(t)
	addr := strings.TrimPrefix(b.baseURL, "http://")
	before := procmem.HeapInUse()
	for i := range 60 {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		host := addr
		if i%2 == 1 {
			host = "rebind.example"
		}
		_, err = fmt.Fprintf(conn, "POST /admin/bulk-replays HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n{", host, 1<<20)
		require.NoError(t, err)
	}
	start := time.Now()
	r := b.do(t, http.MethodGet, "/admin/deliveries", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Less(t, time.Since(start), 2*time.Second)
	// Reserved whole, the 60 would take 60 MiB.
	grew := int64(procmem.HeapInUse()) - int64(before)
	require.Less(t, grew, int64(16<<20), "heap grew by %d MiB while 60 connections announced 1 MiB each", grew>>20)
}

// An admin body over the limit is refused though no header announced its
// size, and a compressed one is refused unread: Fiber would inflate it
// without a bound.
func TestAdminBodiesBoundedAsSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	big := struct{ io.Reader }{strings.NewReader(`{"filter":"` + strings.Repeat("a", 2<<20) + `"}`)}
	req, err := http.NewRequest(http.MethodPost, b.baseURL+"/admin/bulk-replays", big)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1 // sent in chunks
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(bytes.Repeat([]byte(" "), 4<<20))
	require.NoError(t, w.Close())
	req, err = http.NewRequest(http.MethodPost, b.baseURL+"/admin/destinations/app/pause", bytes.NewReader(gz.Bytes()))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err = b.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
}

// A body no admin handler reads (a health check's, a foreign Host's) is
// never taken for the request hidden at its end.
func TestAdminUnreadBodyIsNeverTakenForARequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	addr := strings.TrimPrefix(b.baseURL, "http://")
	hidden := "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	body := strings.Repeat("A", 9000) + hidden
	for _, host := range []string{addr, "rebind.example"} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		n := 0
		for {
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				break
			}
			resp.Body.Close()
			n++
		}
		conn.Close()
		require.Equal(t, 1, n, "Host %s: the request hidden in the body was answered", host)
	}
}
