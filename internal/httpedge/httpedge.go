// Package httpedge bounds what a client's bytes cost a listener before any
// check runs: how many connections it holds, in all and per client
// address, and a request body read as it arrives, never reserved from
// what its Content-Length announces.
//
// fasthttp (Fiber v2's server) reads a whole body before the handler
// runs, into a buffer sized from the declared Content-Length rounded up to
// a power of two: a header that announces 5 MiB reserves 8 MiB, though
// one byte follows. The listeners here set Fiber's StreamRequestBody, so
// fasthttp hands the handler the first few KiB and a stream, and ReadBody
// reads the rest as the client sends it, up to the limit.
package httpedge
