package main

import "testing"

func TestPrintableEscapesWhatDrivesATerminal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"order":"o-1","status":"confirmed"}`: `{"order":"o-1","status":"confirmed"}`,
		"Zürich ✓":                             "Zürich ✓",
		"\x1b]0;owned\x07{}":                   `"\x1b]0;owned\a{}"`,
		"line\nbreak":                          `"line\nbreak"`,
		"\xff":                                 `"\xff"`,
	} {
		if got := printable([]byte(in)); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}
