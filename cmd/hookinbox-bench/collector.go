package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector stands for an OpenTelemetry collector: an OTLP/HTTP server
// in the bench process that takes `POST /v1/traces` in protobuf, decodes
// each export and counts its spans, by name, and its bytes as they came
// over the wire. It keeps nothing else: what the tracing scenario needs
// is that the spans arrived, how many per delivery, and what exporting
// them cost serve.
type collector struct {
	url  string // the base URL, for OTEL_EXPORTER_OTLP_ENDPOINT
	srv  *http.Server
	done chan error

	mu    sync.Mutex
	count spanCount
}

// spanCount is what a collector got: totals since its start, or, after
// since, over a phase.
type spanCount struct {
	Exports  int64            `json:"exports"` // POSTs answered 200
	Bytes    int64            `json:"bytes"`   // their bodies as sent (compressed, if they were)
	Spans    int64            `json:"spans"`
	ByName   map[string]int64 `json:"spans_by_name,omitempty"`
	Rejected int64            `json:"rejected,omitempty"` // POSTs it could not decode
}

// otlpResponse answers every accepted export: an empty
// ExportTraceServiceResponse, no partial success.
var otlpResponse = func() []byte {
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	if err != nil {
		panic(err)
	}
	return b
}()

func startCollector() (*collector, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &collector{url: "http://" + ln.Addr().String(), done: make(chan error, 1), count: spanCount{ByName: map[string]int64{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", c.handle)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { c.done <- c.srv.Serve(ln) }()
	return c, nil
}

// env is what turns a serve's tracing on, every span kept and exported
// here: the standard variables autoexport and the SDK read.
func (c *collector) env() []string {
	return []string{
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + c.url,
		"OTEL_TRACES_SAMPLER=always_on",
	}
}

func (c *collector) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		var n spanCount
		if n, err = decodeExport(body, r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding")); err == nil {
			c.add(n)
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(otlpResponse)
			return
		}
	}
	c.mu.Lock()
	c.count.Rejected++
	c.mu.Unlock()
	// A 400 is final for the exporter: it drops the batch, and the phase's
	// spans per delivery show the loss.
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func (c *collector) add(n spanCount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count.Exports += n.Exports
	c.count.Bytes += n.Bytes
	c.count.Spans += n.Spans
	for name, k := range n.ByName {
		c.count.ByName[name] += k
	}
}

// snapshot is the totals so far.
func (c *collector) snapshot() spanCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.count
	s.ByName = maps.Clone(c.count.ByName)
	return s
}

func (c *collector) close() {
	_ = c.srv.Close()
	<-c.done
}

// decodeExport counts one OTLP/HTTP export request's spans, by name, and
// its bytes as they came (body, before gunzip).
func decodeExport(body []byte, contentType, encoding string) (spanCount, error) {
	n := spanCount{Exports: 1, Bytes: int64(len(body)), ByName: map[string]int64{}}
	if contentType != "application/x-protobuf" {
		return n, fmt.Errorf("content type %q: only OTLP's protobuf is decoded", contentType)
	}
	switch encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return n, err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return n, err
		}
	default:
		return n, fmt.Errorf("content encoding %q", encoding)
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return n, err
	}
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				n.Spans++
				n.ByName[s.GetName()]++
			}
		}
	}
	return n, nil
}

// since is what was counted after before.
func (s spanCount) since(before spanCount) spanCount {
	d := spanCount{Exports: s.Exports - before.Exports, Bytes: s.Bytes - before.Bytes, Spans: s.Spans - before.Spans,
		Rejected: s.Rejected - before.Rejected, ByName: map[string]int64{}}
	for name, k := range s.ByName {
		if k -= before.ByName[name]; k > 0 {
			d.ByName[name] = k
		}
	}
	return d
}
