package testproc

import (
	"net"
	"strconv"
	"testing"
)

func TestAReservedPortIsNotDrawnAgain(t *testing.T) {
	t.Parallel()
	addr := FreeAddr(t)
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portText)
	if reserve(t, port) {
		t.Fatalf("port %d was reserved by FreeAddr, yet reserved again", port)
	}
	t.Run("released when its test ends", func(t *testing.T) {
		other := 0
		t.Run("holder", func(t *testing.T) {
			_, p, _ := net.SplitHostPort(FreeAddr(t))
			other, _ = strconv.Atoi(p)
		})
		if !reserve(t, other) {
			t.Fatalf("port %d still reserved after its test ended", other)
		}
	})
}
