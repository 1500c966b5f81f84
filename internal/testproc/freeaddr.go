package testproc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// FreeAddr returns a loopback address whose port was free a moment ago, for
// a server the test starts next. The port is drawn from below the kernel's
// ephemeral range: a port the kernel hands out for ":0" is what it may hand
// the next outgoing connection too (the tests' many PostgreSQL clients),
// and once one took it between the check and the server's bind ("the
// address is already in use", TestServeAdminMetricsAndRiverUI).
//
// The port stays reserved until t ends, by a lock on a file named after it
// that every test process on the machine honours: between the draw and the
// server's bind, another test's draw could otherwise land on the same port
// (TestServeRelaysWebhooksToKafkaAndNATS once lost its admin port so). The
// lock is the kernel's, so a test process that dies releases it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	low, high := 10000, ephemeralLow()
	for range 100 {
		port := low + rand.IntN(high-low)
		if !reserve(t, port) {
			continue // another test holds it
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: draw another
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	t.Fatal("testproc: no free port below the ephemeral range in 100 draws")
	return ""
}

// reserve takes the machine-wide lock on port until t ends, or reports that
// another test process holds it.
func reserve(t testing.TB, port int) bool {
	dir := filepath.Join(os.TempDir(), "hookinbox-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("testproc: port reservations: %v", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("testproc: port reservations: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	t.Cleanup(func() { f.Close() }) // closing the file releases the lock
	return true
}

// ephemeralLow is the first port of Linux's ephemeral range, or Linux's
// default first port (32768) where the range cannot be read; other systems
// start theirs higher (IANA's is 49152), so ports below it are outside
// theirs too.
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				return n
			}
		}
	}
	return 32768
}
