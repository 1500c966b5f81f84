package httpedge

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/gofiber/fiber/v2"
)

// ErrBodyTooLarge is a body, declared or sent, over the limit.
var ErrBodyTooLarge = errors.New("request body too large")

// firstRead bounds the buffer a body's first read takes from what its
// Content-Length announces: past it, the buffer grows with the bytes
// that arrive.
const firstRead = 64 << 10

// ReadBody returns c's body, read from the connection as it arrives and
// at most max bytes: a body declared or sent over max is ErrBodyTooLarge
// (and Guard closes the connection, whose unread rest would be taken for
// the next request). The slice is the caller's own, not one Fiber reuses; c.Body()
// returns it afterwards too.
func ReadBody(c *fiber.Ctx, max int) ([]byte, error) {
	req := c.Request()
	stream := c.Context().RequestBodyStream()
	if stream == nil {
		// Not streamed (no body, or read already): Body is whole.
		if len(req.Body()) > max {
			return nil, ErrBodyTooLarge
		}
		return bytes.Clone(req.Body()), nil
	}
	declared := req.Header.ContentLength()
	if declared > max {
		return nil, ErrBodyTooLarge
	}
	var body []byte
	var err error
	if declared >= 0 {
		body, err = readDeclared(stream, declared)
	} else {
		body, err = readChunked(stream, max)
	}
	if err != nil {
		return nil, err
	}
	req.SetBodyRaw(body)
	return body, nil
}

// readDeclared reads a body of a declared length, in a buffer that grows
// with what arrives: it starts at firstRead at most and doubles.
func readDeclared(stream io.Reader, declared int) ([]byte, error) {
	buf := make([]byte, 0, min(declared, firstRead))
	for len(buf) < declared {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(declared-len(buf), cap(buf)))
		}
		n, err := stream.Read(buf[len(buf):min(cap(buf), declared)])
		buf = buf[:len(buf)+n]
		if err == io.EOF && len(buf) < declared {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
	}
	return buf, nil
}

// readChunked reads a body sent in chunks, whose length nothing announced,
// up to max bytes.
func readChunked(stream io.Reader, max int) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(stream, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(max) {
		return nil, ErrBodyTooLarge
	}
	return buf.Bytes(), nil
}

// LimitBody is middleware that reads every request's body with ReadBody
// before the next handler, so handlers that call c.Body(), and net/http
// handlers behind Fiber's adaptor, see at most max bytes. A body over max
// is answered 413; a body with a Content-Encoding, 415: Fiber's c.Body()
// would inflate it without a bound, a megabyte of gzip into a gigabyte.
func LimitBody(max int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if enc := c.Request().Header.ContentEncoding(); len(enc) > 0 && !bytes.EqualFold(enc, []byte("identity")) {
			return fiber.ErrUnsupportedMediaType
		}
		if _, err := ReadBody(c, max); err != nil {
			if errors.Is(err, ErrBodyTooLarge) {
				return fiber.ErrRequestEntityTooLarge
			}
			return fiber.NewError(fiber.StatusBadRequest, "could not read the request body")
		}
		return c.Next()
	}
}
