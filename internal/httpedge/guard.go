package httpedge

import (
	"io"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// prefetched is how much of a body fasthttp reads before the handler
// runs, when it streams bodies (readBodyWithStreaming in fasthttp 1.51):
// a body no longer than this, and than the body limit, is in memory whole.
const prefetched = 8 << 10

// Guard makes app's server close every connection whose request body the
// handler left unread, and refuse an Expect: 100-continue whose body is
// declared over max (417). With bodies streamed, what a handler does not
// read stays on the connection, where fasthttp would parse it as the
// next request: a 404, a 405, a 421 or a health check would answer the
// request a client hid in its body. Call it once, after fiber.New.
func Guard(app *fiber.App, max int) {
	srv := app.Server()
	next := srv.Handler
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		next(ctx)
		if !bodyDone(ctx, max) {
			ctx.SetConnectionClose()
		}
	}
	srv.ContinueHandler = func(h *fasthttp.RequestHeader) bool {
		return h.ContentLength() <= max
	}
}

// bodyDone reads what is left of a body fasthttp holds whole, and
// reports whether the connection is at the start of its next request.
func bodyDone(ctx *fasthttp.RequestCtx, max int) bool {
	stream := ctx.RequestBodyStream()
	if stream == nil {
		return true // no body, or read to its end
	}
	n := ctx.Request.Header.ContentLength()
	if n < 0 || n > min(prefetched, max) {
		return false // chunked, or more than fasthttp read ahead
	}
	_, err := io.Copy(io.Discard, io.LimitReader(stream, int64(n)))
	return err == nil
}
