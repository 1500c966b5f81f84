package drills

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/procmem"
)

// attackerAddr is where the announced-body connections come from: the
// valid traffic comes from 127.0.0.1, so the per-address limit that stops
// the attacker leaves it alone.
const attackerAddr = "127.0.0.3"

// holdAnnounced opens n connections from attackerAddr to addr, each
// sending headers that announce size bytes and one byte of the body, and
// holds them in held. It returns how many the listener answered at once
// (refused) with status want; the others wait for their body, answered
// nothing until read_timeout.
func holdAnnounced(t *testing.T, held *[]net.Conn, addr, path string, n, size, want int) (refused int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attackerAddr)}, Timeout: 5 * time.Second}
	conns := make([]net.Conn, 0, n)
	for range n {
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("announced body: %v", err)
		}
		*held = append(*held, conn)
		conns = append(conns, conn)
		_, _ = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n{", path, addr, size)
	}
	// Refusals were written as each connection was accepted.
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Go(func() {
			_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			}
		})
	}
	wg.Wait()
	for _, s := range statuses {
		if s != 0 {
			if s != want {
				t.Errorf("announced body to %s: a refused connection got %d, want %d", path, s, want)
			}
			refused++
		}
	}
	return refused
}

// announcedBodies holds, on both listeners, connections that announce a
// body of max_body_bytes and send one byte, as many as one address may
// hold and more, and checks that they cost the process little memory and
// that valid traffic from another address is still acknowledged promptly
// beside them. fasthttp used to reserve each announced body whole.
func announcedBodies(t *testing.T, p *proc, maxBody int, valid func(time.Duration) time.Duration) string {
	const ingestHeld, adminHeld = 128, 64 // the per-address defaults
	rss0, _, err := procmem.Read(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	r1 := holdAnnounced(t, &held, p.ingest, "/webhooks/github", ingestHeld+20, maxBody, http.StatusTooManyRequests)
	r2 := holdAnnounced(t, &held, p.admin, "/admin/bulk-replays", adminHeld+20, 1<<20, http.StatusTooManyRequests)
	if r1 != 20 || r2 != 20 {
		t.Errorf("announced bodies: refused %d of %d on ingest and %d of %d on admin, want 20 each (one address's limit)",
			r1, ingestHeld+20, r2, adminHeld+20)
	}
	// Measured at once: ingest's read_timeout ends the held connections.
	rss1, _, err := procmem.Read(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	p99 := valid(time.Second)
	// Reserved whole, the held connections would take 128 × max_body_bytes
	// plus 64 MiB.
	if grew := rss1 - rss0; grew > 48<<10 {
		t.Errorf("RSS grew by %d MiB while %d + %d connections announced bodies (bound: 48 MiB)", grew>>10, ingestHeld, adminHeld)
	}
	if p99 > 2*time.Second {
		t.Errorf("valid traffic p99 was %s beside the announced bodies (bound: 2s)", p99)
	}
	return fmt.Sprintf("%d + %d connections announcing bodies held: RSS %d → %d MiB, valid p99 %d ms",
		ingestHeld, adminHeld, rss0>>10, rss1>>10, p99.Milliseconds())
}
