// Package contract holds the admin API's clients in tests to its OpenAPI
// document (internal/admin/openapi.yaml): Transport validates every
// response a test's client receives, and, for the CLI's admin commands,
// every request they send. Only tests import it, so kin-openapi is not
// linked into the binary.
//
// The validator is kin-openapi, pinned in go.mod. v0.153.0 loads OpenAPI
// 3.1 documents, and openapi3filter validates a 3.1 document's bodies
// with a JSON Schema 2020-12 validator (type arrays with "null", const,
// keywords beside a $ref), so libopenapi was not needed.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/hookinbox/hookinbox/internal/admin"
)

// Doc is the admin listener's OpenAPI document, loaded and validated.
type Doc struct {
	T      *openapi3.T
	router routers.Router
	// rest are the paths whose last segment is the router's * ({path}),
	// by their literal prefix: the document's {path} matches one segment
	// where the router's * matches the rest.
	rest map[string]string
}

// Load loads the document once for every test of a package.
var Load = sync.OnceValues(func() (*Doc, error) {
	raw, err := admin.OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	if err := t.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("the document is not valid OpenAPI: %w", err)
	}
	router, err := gorillamux.NewRouter(t)
	if err != nil {
		return nil, err
	}
	d := &Doc{T: t, router: router, rest: map[string]string{}}
	for _, p := range t.Paths.InMatchingOrder() {
		if prefix, ok := strings.CutSuffix(p, "{path}"); ok {
			d.rest[prefix] = p
		}
	}
	return d, nil
})

// Must is Load for a test: its error fails t.
func Must(t testing.TB) *Doc {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// CheckResponse validates one response against the document: its status,
// Content-Type, declared headers and JSON body. A request for a path the
// document does not have (or a method its path lacks) must be refused in
// the API's error shape, as the router refuses it.
func (d *Doc) CheckResponse(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := d.findRoute(req)
	if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
		if status < 400 || status >= 500 {
			return fmt.Errorf("%d from a route the document does not have", status)
		}
		// The document's description: 405 names the methods the path has.
		if status == http.StatusMethodNotAllowed && (errors.Is(err, routers.ErrPathNotFound) || header.Get("Allow") == "") {
			return fmt.Errorf("405 for a path the document lacks, or without Allow (%q)", header.Get("Allow"))
		}
		return d.checkError(header, body)
	}
	if err != nil {
		return err
	}
	if req.Method == http.MethodHead {
		// openapi3filter validates nothing of a HEAD: its status, at least.
		if route.Operation.Responses.Status(status) == nil && route.Operation.Responses.Default() == nil {
			return fmt.Errorf("status %d is not documented", status)
		}
		return nil
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	input.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), input)
}

// CheckRequest validates a request against its operation: the path, its
// parameters, its body. The security requirements are the server's to
// check, not the document's.
func (d *Doc) CheckRequest(req *http.Request, body []byte) error {
	route, params, err := d.findRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	})
}

// findRoute finds the request's operation; a path under a route whose
// last segment is the router's * (the rest, empty included) is looked up
// as that route's.
func (d *Doc) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := d.router.FindRoute(req)
	if !errors.Is(err, routers.ErrPathNotFound) {
		return route, params, err
	}
	at := func(path string) (*routers.Route, map[string]string, error) {
		one := req.Clone(req.Context())
		one.URL = &url.URL{Path: path, RawQuery: req.URL.RawQuery}
		return d.router.FindRoute(one)
	}
	for prefix := range d.rest {
		if strings.HasPrefix(req.URL.Path, prefix) {
			return at(prefix + "rest")
		}
	}
	if trimmed, ok := strings.CutSuffix(req.URL.Path, "/"); ok && trimmed != "" {
		return at(trimmed) // the router ignores a trailing slash
	}
	return nil, nil, err
}

// checkError validates an answer in the API's error shape.
func (d *Doc) checkError(header http.Header, body []byte) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("an error answered as %q, not JSON", ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return d.T.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// Transport is an http.RoundTripper for a test's client of the admin
// API: every response passes through CheckResponse, and one that breaks
// the document fails t; with checkRequests, so does a request that
// CheckRequest refuses and the server answers below 400. The response body is read whole (every
// answer of the admin API is: GET /admin/deliveries/stream is a long
// poll, one JSON page per answer, not an event stream) and handed on
// unchanged.
func Transport(t testing.TB, next http.RoundTripper, checkRequests bool) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return validating{t: t, next: next, requests: checkRequests}
}

type validating struct {
	t        testing.TB
	next     http.RoundTripper
	requests bool
}

func (v validating) RoundTrip(req *http.Request) (*http.Response, error) {
	d, err := Load()
	if err != nil {
		v.t.Errorf("the OpenAPI document: %v", err)
		return v.next.RoundTrip(req)
	}
	var reqErr error
	if v.requests {
		var sent []byte
		if req.GetBody != nil {
			if b, err := req.GetBody(); err == nil {
				sent, _ = io.ReadAll(b)
				b.Close()
			}
		}
		reqErr = d.CheckRequest(req, sent)
	}
	resp, err := v.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if reqErr != nil && resp.StatusCode < 400 {
		// A client may pass a user's input on for the server to refuse
		// (a bad --since gets the API's 400); what it must not get is a
		// success for a request the document does not describe.
		v.t.Errorf("%s %s answered %d, yet it is not a request the OpenAPI document (internal/admin/openapi.yaml) describes: %v",
			req.Method, req.URL.RequestURI(), resp.StatusCode, reqErr)
	}
	body, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if readErr != nil {
		// Cut off: hand on what came, then the error, as it came.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{readErr}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := d.CheckResponse(req, resp.StatusCode, resp.Header, body); err != nil {
		v.t.Errorf("%s %s answered %d, which the OpenAPI document (internal/admin/openapi.yaml) does not allow: %v\nbody: %.500s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, err, body)
	}
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
