package admin

import (
	"net"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// An IPv6 client counts as its /64 (docs/security.md, Sign-in limits):
// one host's 2^64 addresses would otherwise buy a guesser a bucket each
// until the table is full. An IPv4 client counts as its address.
func TestSignInCountsIPv6By64(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	key := func(ip string) string {
		var fctx fasthttp.RequestCtx
		fctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(ip), Port: 1}, nil)
		c := app.AcquireCtx(&fctx)
		defer app.ReleaseCtx(c)
		return clientKey(c)
	}
	require.Equal(t, key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff:ffff:ffff:ffff"))
	require.NotEqual(t, key("2001:db8:1:2::1"), key("2001:db8:1:3::1"))
	require.Equal(t, key("192.0.2.1"), key("::ffff:192.0.2.1"))
	require.NotEqual(t, key("192.0.2.1"), key("192.0.2.2"))
}
