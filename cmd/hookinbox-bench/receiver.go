package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// receiver stands for a destination's service: a fasthttp server in the
// bench process that answers every POST with 200 at once and counts what
// it got. It does not verify signatures: the bare client it is compared
// with signs nothing, so the comparison is of the requests alone.
type receiver struct {
	url      string
	srv      *fasthttp.Server
	ln       net.Listener
	requests atomic.Int64 // since reset
	total    atomic.Int64 // since the start
	first    atomic.Int64 // unix ns of the first request since reset; 0: none yet
	last     atomic.Int64 // unix ns of the latest request
	// A request is answered in microseconds, so requests in flight here
	// say little; the connections a client keeps open say how many
	// requests it has in flight at once (net/http opens one per request
	// when none is idle).
	conns     atomic.Int64
	peakConns atomic.Int64 // most connections open at once since reset
	done      chan error
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: fmt.Sprintf("http://%s/hook", ln.Addr()), ln: ln, done: make(chan error, 1)}
	r.srv = &fasthttp.Server{Handler: r.handle, Name: "hookinbox-bench-receiver", IdleTimeout: time.Minute,
		ConnState: func(_ net.Conn, st fasthttp.ConnState) {
			switch st {
			case fasthttp.StateNew:
				n := r.conns.Add(1)
				for p := r.peakConns.Load(); n > p && !r.peakConns.CompareAndSwap(p, n); p = r.peakConns.Load() {
				}
			case fasthttp.StateClosed, fasthttp.StateHijacked:
				r.conns.Add(-1)
			}
		}}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) handle(c *fasthttp.RequestCtx) {
	now := time.Now().UnixNano()
	r.first.CompareAndSwap(0, now)
	r.last.Store(now)
	r.requests.Add(1)
	r.total.Add(1)
	c.SetStatusCode(fasthttp.StatusOK)
}

// reset starts a new count: requests, first and last times, and the
// peak of connections (from those open now).
func (r *receiver) reset() {
	r.requests.Store(0)
	r.first.Store(0)
	r.last.Store(0)
	r.peakConns.Store(r.conns.Load())
}

// window is the time from the first to the latest request since reset.
func (r *receiver) window() time.Duration {
	f, l := r.first.Load(), r.last.Load()
	if f == 0 || l <= f {
		return 0
	}
	return time.Duration(l - f)
}

func (r *receiver) close() {
	_ = r.srv.Shutdown()
	<-r.done
}

// bareResult is the bare client's run against the receiver.
type bareResult struct {
	Connections int      `json:"connections"`
	Seconds     float64  `json:"seconds"`
	Requests    int64    `json:"requests"`
	Errors      int64    `json:"errors"`
	PerSec      float64  `json:"requests_per_sec"`
	P99         duration `json:"p99"`
}

// bareClient posts payloads to url from conns workers on conns keep-alive
// connections, each request as soon as the previous is answered, for d:
// the most requests per second this machine carries to the receiver at
// that concurrency, with headers like a destination's (an id, a
// timestamp, a signature's worth of bytes), but nothing computed.
func bareClient(ctx context.Context, url string, payloads []payload, conns int, d time.Duration) bareResult {
	client := newHostClient(url, conns)
	defer client.CloseIdleConnections()
	start := time.Now()
	end := start.Add(d)
	var (
		mu       sync.Mutex
		lat      []time.Duration
		requests int64
		errs     int64
		wg       sync.WaitGroup
	)
	for w := range conns {
		wg.Go(func() {
			var (
				mine       []time.Duration
				fails, all int64
			)
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for i := w; ctx.Err() == nil && time.Now().Before(end); i += conns {
				p := payloads[i%len(payloads)]
				req.Reset()
				req.SetRequestURI(url)
				req.Header.SetMethod(fasthttp.MethodPost)
				req.Header.SetContentType("application/json")
				req.Header.Set("Webhook-Id", "hkb_"+strconv.Itoa(i))
				req.Header.Set("Webhook-Timestamp", strconv.FormatInt(time.Now().Unix(), 10))
				req.Header.Set("Webhook-Signature", p.signature)
				req.SetBodyRaw(p.body)
				sent := time.Now()
				err := client.Do(req, resp)
				all++
				if err != nil || resp.StatusCode() != fasthttp.StatusOK {
					fails++
					continue
				}
				mine = append(mine, time.Since(sent))
			}
			mu.Lock()
			lat = append(lat, mine...)
			requests += all
			errs += fails
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	return bareResult{Connections: conns, Seconds: elapsed, Requests: requests, Errors: errs,
		PerSec: float64(requests-errs) / elapsed, P99: percentiles(lat).P99}
}
