package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// document is a verified request as the extractors read it: headers, and
// the body decoded once, on first use, as JSON or as form fields.
type document struct {
	body      []byte
	header    http.Header
	allowForm bool

	decoded bool
	root    map[string]any
	err     error
}

// decode parses the body: a JSON object, or, for senders that post forms
// (Content-Type application/x-www-form-urlencoded), its fields.
func (d *document) decode() (map[string]any, error) {
	if d.decoded {
		return d.root, d.err
	}
	d.decoded = true
	trimmed := trimJSONSpace(d.body)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		obj, err := decodeJSON(trimmed)
		if err != nil {
			d.err = fmt.Errorf("%w: body is not valid JSON", ErrInvalidPayload)
		} else {
			d.root = obj
		}
	case d.allowForm && isForm(headerValue(d.header, "Content-Type")):
		obj, err := parseForm(d.body)
		if err != nil {
			d.err = fmt.Errorf("%w: %v", ErrInvalidPayload, err)
		} else {
			d.root = obj
		}
	default:
		d.err = fmt.Errorf("%w: body is not a JSON object", ErrInvalidPayload)
	}
	return d.root, d.err
}

func isForm(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/x-www-form-urlencoded")
}

// decodeJSON decodes a JSON object keeping numbers as json.Number, so ids
// and millisecond times keep every digit.
func decodeJSON(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	return obj, nil
}

// lookup returns the value at a dotted path, or nil when any step is
// missing. The error is the body's: not JSON, not a form.
func (d *document) lookup(path string) (any, error) {
	root, err := d.decode()
	if err != nil {
		return nil, err
	}
	var v any = root
	for part := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil
		}
		v = m[part]
	}
	return v, nil
}

// value returns a field's text, "" when absent. A JSON value that is
// neither a string nor a number is a malformed payload.
func (d *document) value(f Field) (string, error) {
	switch {
	case f.Header != "":
		return headerValue(d.header, f.Header), nil
	case f.BodySHA256:
		sum := sha256.Sum256(d.body)
		return "sha256:" + hex.EncodeToString(sum[:]), nil
	case f.JSON != "":
		v, err := d.lookup(f.JSON)
		if err != nil || v == nil {
			return "", err
		}
		s, ok := scalarString(v)
		if !ok {
			return "", fmt.Errorf("%w: %s must be a string or a number", ErrInvalidPayload, f.where())
		}
		return s, nil
	}
	return "", nil
}

// scalarString is a JSON string or number as text.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// time reads an event time: RFC 3339 (or GitLab's "2006-01-02 15:04:05
// UTC"), or a unix time in f.Unit, possibly fractional. Anything else is
// zero: the time only orders events, and the event is already verified.
func (d *document) time(f Field) time.Time {
	raw, err := d.value(f)
	if err != nil || raw == "" {
		return time.Time{}
	}
	return parseTime(raw, f.Unit)
}

func parseTime(raw, unit string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -0700"} {
		if t, err := time.Parse(layout, raw); err == nil {
			return t.UTC()
		}
	}
	// Decimal, read exactly: a float would turn Mailgun's
	// 1709294340.329574 into …329574108.
	whole, frac, _ := strings.Cut(raw, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n <= 0 || n > 1e15 || strings.Trim(frac, "0123456789") != "" {
		return time.Time{}
	}
	frac = (frac + "000000000")[:9]
	nanos, _ := strconv.ParseInt(frac, 10, 64)
	if unit == "ms" {
		return time.UnixMilli(n).Add(time.Duration(nanos / 1e3)).UTC() // a fraction of a millisecond
	}
	return time.Unix(n, nanos).UTC()
}

// errNotForm is a form body whose fields cannot be parsed.
var errNotForm = errors.New("body is neither a JSON object nor form-encoded fields")

// parseForm reads a form-encoded body. A field whose value is a JSON
// object (Slack's payload=) is read as that object, so a path can reach
// into it.
func parseForm(body []byte) (map[string]any, error) {
	vals, err := url.ParseQuery(string(body))
	if err != nil || len(vals) == 0 {
		return nil, errNotForm
	}
	m := make(map[string]any, len(vals))
	for k, vs := range vals {
		v := vs[0]
		if t := trimJSONSpace([]byte(v)); len(t) > 0 && t[0] == '{' {
			if obj, err := decodeJSON(t); err == nil {
				m[k] = obj
				continue
			}
		}
		m[k] = v
	}
	return m, nil
}
