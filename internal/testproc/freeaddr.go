package testproc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreeAddr returns a loopback address whose port was free a moment ago, for
// a server the test starts next. The port is drawn from below the kernel's
// ephemeral range: a port the kernel hands out for ":0" is what it may hand
// the next outgoing connection too (the tests' many PostgreSQL clients),
// and once one took it between the check and the server's bind ("the
// address is already in use", TestServeAdminMetricsAndRiverUI).
func FreeAddr(t testing.TB) string {
	t.Helper()
	low, high := 10000, ephemeralLow()
	for range 100 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", low+rand.IntN(high-low)))
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
