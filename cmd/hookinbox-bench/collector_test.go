package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exportBody is an OTLP export of spans named names, spread over two
// resources and, in the first, two scopes, as an SDK batches them.
func exportBody(t *testing.T, names ...string) []byte {
	t.Helper()
	spans := func(names []string) []*tracepb.Span {
		var out []*tracepb.Span
		for _, n := range names {
			out = append(out, &tracepb.Span{Name: n})
		}
		return out
	}
	half := len(names) / 2
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans(names[:1])}, {Spans: spans(names[1:half])}}},
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans(names[half:])}}},
	}}
	b, err := proto.Marshal(req)
	require.NoError(t, err)
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestDecodeExportCountsSpansByName(t *testing.T) {
	t.Parallel()
	body := exportBody(t, "handler issues", "POST /webhooks/{source}", "handler issues", "POST bench-receiver")
	n, err := decodeExport(body, "application/x-protobuf", "")
	require.NoError(t, err)
	require.Equal(t, spanCount{Exports: 1, Bytes: int64(len(body)), Spans: 4,
		ByName: map[string]int64{"handler issues": 2, "POST /webhooks/{source}": 1, "POST bench-receiver": 1}}, n)

	zipped := gzipped(t, body)
	z, err := decodeExport(zipped, "application/x-protobuf", "gzip")
	require.NoError(t, err)
	require.Equal(t, n.ByName, z.ByName)
	require.Equal(t, int64(len(zipped)), z.Bytes, "bytes as they came over the wire")

	_, err = decodeExport(body, "application/json", "")
	require.Error(t, err, "OTLP/JSON is not decoded")
	_, err = decodeExport(body, "application/x-protobuf", "br")
	require.Error(t, err)
	_, err = decodeExport([]byte{0xff, 0xff}, "application/x-protobuf", "")
	require.Error(t, err)
}

func TestSpanCountSince(t *testing.T) {
	t.Parallel()
	before := spanCount{Exports: 2, Bytes: 100, Spans: 10, ByName: map[string]int64{"a": 6, "b": 4}}
	after := spanCount{Exports: 5, Bytes: 350, Spans: 25, Rejected: 1, ByName: map[string]int64{"a": 6, "b": 9, "c": 10}}
	require.Equal(t, spanCount{Exports: 3, Bytes: 250, Spans: 15, Rejected: 1, ByName: map[string]int64{"b": 5, "c": 10}},
		after.since(before))
}

// TestCollectorAnswersOTLPExports posts exports to a collector on a real
// port, as serve's exporter does: each is answered with an OTLP response
// and counted; one that does not decode is rejected and counted apart.
func TestCollectorAnswersOTLPExports(t *testing.T) {
	t.Parallel()
	c, err := startCollector()
	require.NoError(t, err)
	t.Cleanup(c.close)
	require.Contains(t, c.env(), "OTEL_EXPORTER_OTLP_ENDPOINT="+c.url)

	post := func(body []byte, encoding string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, c.url+"/v1/traces", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-protobuf")
		if encoding != "" {
			req.Header.Set("Content-Encoding", encoding)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(exportBody(t, "a", "b", "a"), "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/x-protobuf", resp.Header.Get("Content-Type"))
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, proto.Unmarshal(b, &coltracepb.ExportTraceServiceResponse{}))
	before := c.snapshot()

	require.Equal(t, http.StatusOK, post(gzipped(t, exportBody(t, "b", "c")), "gzip").StatusCode)
	require.Equal(t, http.StatusBadRequest, post([]byte("not protobuf"), "gzip").StatusCode)
	got := c.snapshot()
	require.Equal(t, int64(5), got.Spans)
	require.Equal(t, map[string]int64{"a": 2, "b": 2, "c": 1}, got.ByName)
	require.Equal(t, int64(1), got.Rejected)
	require.Equal(t, map[string]int64{"b": 1, "c": 1}, got.since(before).ByName)
}
