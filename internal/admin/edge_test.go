package admin_test

import (
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// Headers that announce a body of the admin's limit and send one byte
// of it reserve nothing, whether the Host is ours or not, and an operator
// is answered beside them. Not parallel: it reads the process's heap.
func TestAdminAnnouncedBodyReservesNothing(t *testing.T) {
	b := setup(t)
	addr := strings.TrimPrefix(b.baseURL, "http://")
	before := heapInUse()
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
	grew := int64(heapInUse()) - int64(before)
	require.Less(t, grew, int64(16<<20), "heap grew by %d MiB while 60 connections announced 1 MiB each", grew>>20)
}
