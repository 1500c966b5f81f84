package admin

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "body %q", b)
	return v
}

// FuzzCanonicalJSON: canonicalJSON never panics, is idempotent, keeps a
// JSON body's value, and leaves anything else byte for byte.
func FuzzCanonicalJSON(f *testing.F) {
	f.Add([]byte(`{"reason":"retry","ids":[3,1,2]}`))
	f.Add([]byte(` { "b" : 1 , "a" : [ true , null , "x" ] } `))
	f.Add([]byte(`{"n":12345678901234567890123,"f":1.50e+3,"neg":-0}`))
	f.Add([]byte(`{"html":"<a href=\"x\">&</a>","u":"\u2028\ud83d\ude00"}`))
	f.Add([]byte(`{"dup":1,"dup":2}`))
	f.Add([]byte(`{"a":1} {"a":2}`))
	f.Add([]byte(`{"a":1} x`))
	f.Add([]byte(`{"a":1`))
	f.Add([]byte("\"\xff\""))
	f.Add([]byte(``))
	f.Add([]byte(`   `))
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		c := canonicalJSON(b)
		require.Equal(t, orig, b, "canonicalJSON must not modify its input")
		require.Equal(t, c, canonicalJSON(c), "not idempotent for %q", b)
		if !json.Valid(b) {
			require.Equal(t, b, c, "a body that is not JSON must come back unchanged")
			return
		}
		require.True(t, json.Valid(c), "canonical form %q of %q is not JSON", c, b)
		if !reflect.DeepEqual(decodeNumbers(t, b), decodeNumbers(t, c)) {
			t.Fatalf("canonical form %q of %q decodes to another value", c, b)
		}
	})
}

// FuzzDecodeCursor: decodeCursor never panics, on anything a client sends.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(0))
	f.Add(encodeCursor(42))
	f.Add(encodeCursor(9223372036854775807))
	f.Add("aWQ6")     // "id:"
	f.Add("aWQ6LTE")  // "id:-1"
	f.Add("aWQ6eA")   // "id:x"
	f.Add("aWQ6NDI=") // padded
	f.Add("")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = decodeCursor(s)
	})
}

// FuzzCursorRoundTrip: a cursor this API returned gives back its id.
func FuzzCursorRoundTrip(f *testing.F) {
	for _, id := range []int64{0, 1, 42, 1 << 31, 1<<53 + 1, 9223372036854775807, -1} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id int64) {
		if id < 0 {
			t.Skip("ids are positive")
		}
		got, err := decodeCursor(encodeCursor(id))
		require.NoError(t, err)
		require.Equal(t, id, got)
	})
}
