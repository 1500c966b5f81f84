package httpedge

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveHeld accepts on a limited listener and holds every connection it
// gets until the test ends.
func serveHeld(t *testing.T, c Conns) (addr string, held chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lim := Limit(ln, c)
	held = make(chan net.Conn, 100)
	go func() {
		for {
			conn, err := lim.Accept()
			if err != nil {
				return
			}
			held <- conn
		}
	}()
	t.Cleanup(func() { lim.Close() })
	return ln.Addr().String(), held
}

// dialFrom connects from a local address and returns the status the
// listener answered with, or 0 when it answered nothing within 100ms.
func dialFrom(t *testing.T, addr, from string) (net.Conn, int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return conn, 0
	}
	resp.Body.Close()
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	return conn, resp.StatusCode
}

func TestLimitRefusesPastEachBoundAndFreesOnClose(t *testing.T) {
	t.Parallel()
	addr, held := serveHeld(t, Conns{Max: 3, PerAddress: 2})

	_, s1 := dialFrom(t, addr, "127.0.0.1")
	_, s2 := dialFrom(t, addr, "127.0.0.1")
	_, s3 := dialFrom(t, addr, "127.0.0.1")
	require.Equal(t, []int{0, 0, http.StatusTooManyRequests}, []int{s1, s2, s3}, "the third from one address")

	_, s4 := dialFrom(t, addr, "127.0.0.2")
	_, s5 := dialFrom(t, addr, "127.0.0.3")
	require.Equal(t, []int{0, http.StatusServiceUnavailable}, []int{s4, s5}, "the fourth in all")

	// A connection the server closes gives its place back, once.
	first := <-held
	require.NoError(t, first.Close())
	_ = first.Close()
	_, s6 := dialFrom(t, addr, "127.0.0.1")
	require.Equal(t, 0, s6)
	_, s7 := dialFrom(t, addr, "127.0.0.3")
	require.Equal(t, http.StatusServiceUnavailable, s7)
}

func TestLimitNegativeIsNone(t *testing.T) {
	t.Parallel()
	addr, _ := serveHeld(t, Conns{Max: -1, PerAddress: -1})
	for range 5 {
		_, s := dialFrom(t, addr, "127.0.0.1")
		require.Equal(t, 0, s)
	}
}

func TestAddressKeyTakesIPv6By64(t *testing.T) {
	t.Parallel()
	key := func(s string) netip.Prefix {
		return ClientPrefix(&net.TCPAddr{IP: net.ParseIP(s), Port: 1})
	}
	require.Equal(t, key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff::9"))
	require.NotEqual(t, key("2001:db8:1:2::1"), key("2001:db8:1:3::1"))
	require.Equal(t, key("192.0.2.1"), key("::ffff:192.0.2.1"))
	require.NotEqual(t, key("192.0.2.1"), key("192.0.2.2"))
}

// No limit per address (behind a proxy) keeps the whole listener's.
func TestLimitPerAddressOffKeepsTheTotal(t *testing.T) {
	t.Parallel()
	addr, _ := serveHeld(t, Conns{Max: 2, PerAddress: -1})
	_, s1 := dialFrom(t, addr, "127.0.0.1")
	_, s2 := dialFrom(t, addr, "127.0.0.1")
	_, s3 := dialFrom(t, addr, "127.0.0.1")
	require.Equal(t, []int{0, 0, http.StatusServiceUnavailable}, []int{s1, s2, s3})
}

// An address whose connections all closed is forgotten: the table holds
// only the addresses of connections open now.
func TestLimitForgetsClosedAddresses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lim := Limit(ln, Conns{Max: 10, PerAddress: 2}).(*limitListener)
	t.Cleanup(func() { lim.Close() })
	for _, from := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		client, err := d.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { client.Close() })
		conn, err := lim.Accept()
		require.NoError(t, err)
		require.NoError(t, conn.Close())
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	require.Empty(t, lim.per)
	require.Zero(t, lim.total)
}
