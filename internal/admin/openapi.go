package admin

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/gofiber/fiber/v2"
	"gopkg.in/yaml.v3"
)

// The admin listener's OpenAPI 3.1 document.
//
// Its source is openapi.yaml, embedded in the binary, and it is served as
// JSON (GET /admin/openapi.json, `hookinbox openapi`). YAML because the
// document is written by hand and read in review: it takes comments, and
// anchors and merge keys (<<: *apiPost) give every operation the answers
// it shares with others (401, 403, 421, ...) in one line rather than
// repeated blocks that drift apart. JSON because that is what every
// OpenAPI tool and client generator reads without a YAML parser; it is
// made once, at first use, with the yaml package the config already uses.
//
// Loading expands two things the YAML abbreviates, so that the JSON holds
// every route as its own operation:
//
//   - a path item's x-any-method (a route registered for every method:
//     River UI, the console's catch-all) becomes one operation per method
//     OpenAPI has a field for; CONNECT, which the router answers too, has
//     none (openapi_test.go lists it as the one exclusion);
//   - a GET gets a HEAD beside it, as the router registers one (Fiber's
//     Get answers HEAD): the same answers without bodies.
//
// And a schema's x-codes (the error codes an answer may carry) becomes a
// sibling restriction of the Error schema's code, which OpenAPI 3.1 (JSON
// Schema 2020-12) applies beside the $ref.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIDocument is the admin listener's OpenAPI document, as JSON: a
// copy, the caller's to change.
func OpenAPIDocument() ([]byte, error) {
	doc, err := openAPIJSON()
	return bytes.Clone(doc), err
}

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	delete(doc, "x-responses") // the merge keys' sources, merged by now
	paths, _ := doc["paths"].(map[string]any)
	for path, v := range paths {
		item, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("openapi.yaml: paths[%q] is not a path item", path)
		}
		if op, ok := item["x-any-method"]; ok {
			delete(item, "x-any-method")
			for _, m := range openAPIMethods {
				item[m] = deepCopy(op)
			}
		}
		if get, ok := item["get"].(map[string]any); ok && item["head"] == nil {
			head := deepCopy(get).(map[string]any)
			if id, ok := head["operationId"].(string); ok {
				head["operationId"] = id + "Head"
			}
			head["summary"] = "HEAD of GET " + path + ": its answers without bodies."
			delete(head, "description")
			item["head"] = head
		}
	}
	restrictCodes(doc)
	return json.MarshalIndent(doc, "", "  ")
})

// openAPIMethods are the operations a path item may hold (OpenAPI 3.1:
// no CONNECT).
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// restrictCodes turns each x-codes beside a $ref to the Error schema into
// the codes that answer's error may have.
func restrictCodes(v any) {
	switch v := v.(type) {
	case map[string]any:
		if codes, ok := v["x-codes"]; ok && v["$ref"] == "#/components/schemas/Error" {
			v["properties"] = map[string]any{"error": map[string]any{
				"properties": map[string]any{"code": map[string]any{"enum": codes}}}}
		}
		for _, e := range v {
			restrictCodes(e)
		}
	case []any:
		for _, e := range v {
			restrictCodes(e)
		}
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := maps.Clone(v)
		for k, e := range out {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// serveOpenAPI is GET /admin/openapi.json. Scope read, like the rest of
// /admin/: the document reveals no data (no names of sources or
// destinations, no token), but every route under /admin/ taking a token
// keeps the listener's rule one sentence long, and whoever calls the API
// has a token to read its contract with; `hookinbox openapi` prints it
// without one.
func serveOpenAPI(c *fiber.Ctx) error {
	doc, err := OpenAPIDocument()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(doc)
}
