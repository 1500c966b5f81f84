package cli

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What the commands print comes largely from outside: a sender's headers,
// payloads and ids, a destination's answers, the admin API's replies. A
// terminal acts on the control characters in it instead of showing them
// (ESC ] 0 retitles the window, ESC [ 2 J clears it, a C1 CSI does either
// on some terminals), so everything of that kind is printed through
// escapeControls. Printable Unicode is shown as it is.

// printable is s for one line of output: every control character, line
// breaks and tabs included, written as an escape.
func printable(s string) string { return escapeControls(s, false, false) }

// printableText is s for output that may span lines (a payload, an
// error): newlines and tabs are kept, every other control character is
// written as an escape.
func printableText(s string) string { return escapeControls(s, true, false) }

// printableJSON is JSON text made safe to print and still JSON: DEL and
// the C1 controls, which JSON allows raw inside strings, become \u00XX
// escapes. Any other control character, only possible in text that is not
// JSON, is escaped as printableText does.
func printableJSON(s string) string { return escapeControls(s, true, true) }

// escapeControls writes C0 controls, DEL, C1 controls and bytes that are
// not UTF-8 the way strconv.Quote does (\x1b, \a, \u009b, \xff); with
// multiline, newlines and tabs are kept; asJSON writes the C0, DEL and C1
// escapes in JSON's \u00XX form. A backslash is left alone: doubling it
// would garble a JSON payload's own escapes, and an escape a sender wrote
// as text is as harmless as one written here.
func escapeControls(s string, multiline, asJSON bool) string {
	if !needsEscape(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case isControl(r) && asJSON:
			fmt.Fprintf(&b, `\u%04x`, r)
		case isControl(r):
			q := strconv.QuoteRune(r) // '\x1b', '\a', '\u009b'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) && !(multiline && (r == '\n' || r == '\t')) {
			return true
		}
		i += size
	}
	return false
}

// isControl reports whether a terminal may act on r, or r may make what
// is shown differ from what is there: C0, DEL and C1, and the invisible
// format characters, the bidirectional overrides and isolates among them,
// that reorder or hide text (an id that reads as another).
func isControl(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e ||
		r >= 0x2060 && r <= 0x2069 || r == 0xfeff:
		return true
	}
	return false
}
