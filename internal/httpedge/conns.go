package httpedge

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Conns bounds the connections a listener holds at once.
type Conns struct {
	// Max is the most connections held at once; one more is answered 503
	// with Retry-After and closed. Negative: no limit.
	Max int

	// PerAddress is the most connections held at once from one client
	// address (an IPv6 client by its /64, the block one host is given);
	// one more is answered 429 with Retry-After and closed, so that one
	// client cannot take every connection. Behind a proxy every client
	// has the proxy's address: raise it to Max there. Negative: no limit.
	PerAddress int
}

// Limit returns ln, answering and closing at once each connection over
// the limits instead of handing it to the server.
func Limit(ln net.Listener, c Conns) net.Listener {
	if c.Max < 0 && c.PerAddress < 0 {
		return ln
	}
	return &limitListener{Listener: ln, limits: c, per: map[netip.Prefix]int{}}
}

type limitListener struct {
	net.Listener
	limits Conns

	mu    sync.Mutex
	total int
	per   map[netip.Prefix]int // entries removed at zero: at most Max
}

// Refusals are written on the accepting goroutine: a new socket's send
// buffer takes them at once, and the deadline bounds a client that
// shrank its window to nothing.
const refusalWriteTimeout = 100 * time.Millisecond

const (
	refusedTotal = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\r\ntoo many connections"
	refusedPer   = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 36\r\n\r\ntoo many connections from one client"
)

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := ClientPrefix(c.RemoteAddr())
		if refusal := l.take(key); refusal != "" {
			_ = c.SetWriteDeadline(time.Now().Add(refusalWriteTimeout))
			_, _ = c.Write([]byte(refusal))
			_ = c.Close()
			continue
		}
		return &limitedConn{Conn: c, release: func() { l.give(key) }}, nil
	}
}

// take counts a connection from key in, or says which refusal it gets.
func (l *limitListener) take(key netip.Prefix) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limits.Max >= 0 && l.total >= l.limits.Max {
		return refusedTotal
	}
	if l.limits.PerAddress >= 0 && l.per[key] >= l.limits.PerAddress {
		return refusedPer
	}
	l.total++
	l.per[key]++
	return ""
}

func (l *limitListener) give(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.per[key]--; l.per[key] <= 0 {
		delete(l.per, key)
	}
}

// ClientPrefix is the client a connection counts as, for every limit per
// client address: its IPv4 address, or its IPv6 /64, the block one host
// is given. A connection with no IP (a Unix socket) counts as one shared
// client.
func ClientPrefix(a net.Addr) netip.Prefix {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// limitedConn gives its place back once, however often it is closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
