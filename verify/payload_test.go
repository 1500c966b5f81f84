package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzValidJSONMatchesEncodingJSON: validJSON, on the json/v2 engine,
// accepts exactly the bodies encoding/json.Valid accepts, so switching
// engines changed no answer a sender gets. The seeds are the corners where
// two JSON parsers usually part: invalid UTF-8, lone surrogates, control
// characters, duplicate names, number forms, nesting depth, trailing bytes.
func FuzzValidJSONMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, ` {"a" : [1, 2.5e-3, -0, true, false, null, "x"]} `,
		`{"a":1,"a":2}`,         // duplicate names: v1 accepts them
		"{\"a\":\"\xff\xfe\"}",  // invalid UTF-8 in a string
		"{\"\xc3\":1}",          // invalid UTF-8 in a name
		`{"a":"\ud800"}`,        // a lone surrogate escape
		`{"a":"\udc00\ud800"}`,  // surrogates out of order
		"{\"a\":\"tab\there\"}", // a raw control character
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":+1}`, `{"a":1e}`, `{"a":1e999}`,
		`{"a":1,}`, `{"a":1}{}`, `{"a":1} x`, `{"a":1}` + "\x00",
		"\ufeff{}", // a byte order mark
		`{"a":NaN}`, `{"a":'x'}`, `{a:1}`, `{"a":1`, ``, ` `,
		`{"a":"\u00e9\n\"\\\/\b\f\r\t"}`, `{"a":"\x"}`, `{"a":"\u12"}`,
		strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000),
		strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001),
		strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000),
		strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		require.Equal(t, json.Valid(body), validJSON(body), "body %q", body)
	})
}
